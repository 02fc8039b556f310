"""The emulator's DCGM-exporter endpoint over real HTTP, read with prometheus-client's parser:
dcgm-exporter's default families, types and labels, one GPU per TP rank, and values that follow
the emulated engine (idle, loading, busy) rather than constants."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from gpuplane.live.emulator.dcgm import FAMILIES, DcgmSettings
from gpuplane.live.emulator.dcgm_model import MIB, fb_used_bytes
from gpuplane.live.emulator.settings import build, deployment
from gpuplane.topology.catalog import BoardSpec, get_gpu_model
from tests.integration.llm_servers import MODEL, emulator_with_dcgm, settings, stream

pytestmark = pytest.mark.integration
LABELS = {"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "DCGM_FI_DRIVER_VERSION"}
POD = DcgmSettings(
    "node-a", pod="llama-0", namespace="serving", container="vllm", collect_interval_ms=40
)
_BOARD = get_gpu_model("H100-80GB").board
assert _BOARD is not None
BOARD: BoardSpec = _BOARD


async def scrape(client: aiohttp.ClientSession, url: str) -> dict[str, dict[str, float]]:
    """{family: {gpu: value}} of one scrape, after checking the families' types and labels."""
    async with client.get(url + "/metrics") as resp:
        assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/plain")
        text = await resp.text()
    out: dict[str, dict[str, float]] = {}
    for fam in text_string_to_metric_families(text):
        out[fam.name] = {}
        for sample in fam.samples:
            assert LABELS | {"container", "namespace", "pod"} <= set(sample.labels)
            out[fam.name][sample.labels["gpu"]] = sample.value
    return out


async def after_collection(client: aiohttp.ClientSession, url: str) -> dict[str, dict[str, float]]:
    await asyncio.sleep(3 * POD.collect_interval_ms / 1000)
    return await scrape(client, url)


def test_default_families_labels_and_one_gpu_per_tp_rank() -> None:
    async def main() -> None:
        s = settings(tp=2)
        async with emulator_with_dcgm(s, POD) as (_, dcgm), aiohttp.ClientSession() as client:
            async with client.get(dcgm + "/metrics") as resp:
                text = await resp.text()
            families = {f.name: f for f in text_string_to_metric_families(text)}
            for fam in FAMILIES:
                kind = families[fam.name].type
                assert kind == fam.kind, fam.name
                assert f"# TYPE {fam.name} {fam.kind}\n" in text
                assert f"\n{fam.name}{{gpu=" in text  # a counter keeps its name (no _total)
            util = families["DCGM_FI_DEV_GPU_UTIL"].samples
            assert [x.labels["gpu"] for x in util] == ["0", "1"]
            assert [x.labels["device"] for x in util] == ["nvidia0", "nvidia1"]
            assert len({x.labels["UUID"] for x in util}) == 2
            first = util[0].labels
            assert first["modelName"] == "NVIDIA H100 80GB HBM3"
            assert (first["Hostname"], first["pod"], first["namespace"]) == (
                "node-a",
                "llama-0",
                "serving",
            )
            assert first["container"] == "vllm" and first["pci_bus_id"] == "00000000:18:00.0"
            xid = families["DCGM_FI_DEV_XID_ERRORS"].samples[0].labels
            assert (xid["err_code"], xid["err_msg"]) == ("0", "No Error")

    asyncio.run(main())


def test_values_follow_the_engine_idle_then_busy_then_idle() -> None:
    async def main() -> None:
        s = settings(time_scale=5.0)
        built, load_s = build(s)
        ready_fb = fb_used_bytes(deployment(s, built, load_s), load_s + 1) // MIB
        async with emulator_with_dcgm(s, POD) as (url, dcgm), aiohttp.ClientSession() as client:
            idle = await after_collection(client, dcgm)
            assert idle["DCGM_FI_DEV_GPU_UTIL"]["0"] == 0
            assert idle["DCGM_FI_DEV_POWER_USAGE"]["0"] == BOARD.idle_w
            assert idle["DCGM_FI_DEV_SM_CLOCK"]["0"] == BOARD.idle_sm_clock_mhz
            assert idle["DCGM_FI_DEV_FB_USED"]["0"] == ready_fb
            total = idle["DCGM_FI_DEV_FB_USED"]["0"] + idle["DCGM_FI_DEV_FB_FREE"]["0"]
            assert total == get_gpu_model("H100-80GB").memory_mib
            body = {"model": MODEL, "prompt": "kv " * 2000, "max_tokens": 1000, "ignore_eos": True}
            load = [asyncio.create_task(stream(client, url + "/v1/completions", body))]
            load += [
                asyncio.create_task(
                    stream(client, url + "/v1/completions", {**body, "prompt": f"{k} " * 900})
                )
                for k in range(3)
            ]
            await asyncio.sleep(0.5)  # 2.5 emulated seconds into ~8 s of decoding
            busy = await scrape(client, dcgm)
            assert busy["DCGM_FI_DEV_GPU_UTIL"]["0"] >= 90
            assert BOARD.idle_w < busy["DCGM_FI_DEV_POWER_USAGE"]["0"] <= BOARD.tdp_w
            assert busy["DCGM_FI_DEV_SM_CLOCK"]["0"] == BOARD.max_sm_clock_mhz
            assert busy["DCGM_FI_PROF_DRAM_ACTIVE"]["0"] > 0.5
            assert busy["DCGM_FI_DEV_GPU_TEMP"]["0"] > idle["DCGM_FI_DEV_GPU_TEMP"]["0"]
            assert busy["DCGM_FI_PROF_PCIE_TX_BYTES"]["0"] > 0
            energy = busy["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]["0"]
            assert energy > idle["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]["0"]
            await asyncio.gather(*load)
            after = await after_collection(client, dcgm)
            assert after["DCGM_FI_DEV_GPU_UTIL"]["0"] == 0
            assert after["DCGM_FI_DEV_FB_USED"]["0"] == ready_fb  # vLLM's KV pool is allocated
            assert after["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]["0"] > energy

    asyncio.run(main())


def test_framebuffer_fills_while_the_weights_load() -> None:
    async def main() -> None:
        s = settings(time_scale=1.0, load_time_s=30.0)
        async with emulator_with_dcgm(s, POD) as (_, dcgm), aiohttp.ClientSession() as client:
            first = await after_collection(client, dcgm)
            await asyncio.sleep(0.5)
            second = await scrape(client, dcgm)
            a, b = first["DCGM_FI_DEV_FB_USED"]["0"], second["DCGM_FI_DEV_FB_USED"]["0"]
            assert 0 < a < b < 16 * 1024  # part of the 15 GiB of weights, growing
            assert second["DCGM_FI_PROF_PCIE_RX_BYTES"]["0"] > 1e9  # the weights, at 2 GB/s
            assert second["DCGM_FI_DEV_GPU_UTIL"]["0"] == 0

    asyncio.run(main())
