"""Helpers for the engine-emulator and router tests: servers on loopback in the test's loop."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from gpuplane.live.emulator.dcgm import DcgmSettings, make_dcgm_app
from gpuplane.live.emulator.kv_config import KvTransferConfig
from gpuplane.live.emulator.service import make_app
from gpuplane.live.emulator.settings import EmulatorSettings, build, deployment
from gpuplane.live.http.aiohttp_serve import serving
from gpuplane.live.router.service import make_router_app
from gpuplane.serving.inference_server import InferenceServerSpec

MODEL = "llama-8b"
Json = dict[str, Any]  # JSON bodies: nested values are read by key


def settings(
    *,
    kind: str = "vllm",
    time_scale: float = 50.0,
    load_time_s: float = 0.0,
    seed: int = 0,
    max_model_len: int | None = 4096,
    max_num_batched_tokens: int | None = None,
    tp: int = 1,
    kv_transfer: KvTransferConfig | None = None,
    kv_link_gbit: float = 400.0,
    kv_hold_timeout_s: float = 480.0,
) -> EmulatorSettings:
    spec = InferenceServerSpec(
        kind=kind,
        model="Llama-3.1-8B",
        served_model_name=MODEL,
        tensor_parallel_size=tp,
        max_model_len=max_model_len,
        max_num_batched_tokens=max_num_batched_tokens,
    )
    return EmulatorSettings(
        spec,
        "H100-80GB",
        time_scale,
        seed,
        load_time_s=load_time_s,
        kv_transfer=kv_transfer,
        kv_link_gbit=kv_link_gbit,
        kv_hold_timeout_s=kv_hold_timeout_s,
    )


@asynccontextmanager
async def emulator(s: EmulatorSettings | None = None) -> AsyncIterator[str]:
    s = s or settings()
    built, load_s = build(s)
    async with serving(make_app(s, built.engine, load_s)) as url:
        yield url


@asynccontextmanager
async def emulator_with_dcgm(
    s: EmulatorSettings, dcgm: DcgmSettings
) -> AsyncIterator[tuple[str, str]]:
    """An emulator and its DCGM endpoint: (engine URL, DCGM URL)."""
    built, load_s = build(s)
    app = make_app(s, built.engine, load_s)
    dcgm_app = make_dcgm_app(app, deployment(s, built, load_s), dcgm, "NVIDIA H100 80GB HBM3")
    async with serving(app) as url, serving(dcgm_app) as dcgm_url:
        yield url, dcgm_url


@asynccontextmanager
async def router(
    urls: list[str],
    policy: str,
    *,
    prefill: Sequence[str] = (),
    decode: Sequence[str] = (),
) -> AsyncIterator[str]:
    app = make_router_app(
        urls, policy, scrape_interval_s=0.02, prefill_urls=prefill, decode_urls=decode
    )
    async with serving(app) as url:
        yield url


Sample = tuple[str, dict[str, str], float]


async def scrape(client: aiohttp.ClientSession, url: str) -> list[Sample]:
    """The samples of ``url``'s ``/metrics``."""
    async with client.get(url + "/metrics") as resp:
        text = await resp.text()
    return [
        (s.name, dict(s.labels), s.value)
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
    ]


def total(samples: list[Sample], name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    return sum(
        v for n, lab, v in samples if n == name and all(lab.get(k) == x for k, x in labels.items())
    )


async def post(client: aiohttp.ClientSession, url: str, body: Json) -> tuple[int, Json]:
    async with client.post(url, json=body) as resp:
        data: Json = await resp.json()
        return resp.status, data


async def stream(client: aiohttp.ClientSession, url: str, body: Json) -> list[str]:
    """The SSE ``data:`` payloads of a streaming request, in order."""
    out: list[str] = []
    async with client.post(url, json={**body, "stream": True}) as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("text/event-stream")
        async for line in resp.content:
            text = line.decode().strip()
            if text.startswith("data: "):
                out.append(text[len("data: ") :])
    return out


def chunks(payloads: list[str]) -> list[Json]:
    assert payloads[-1] == "[DONE]"
    return [json.loads(p) for p in payloads[:-1]]
