"""The emulated GPUs' DCGM fields: power and energy agree, busy shares drive utilisation and
clocks, the framebuffer follows the memory plan through the cold start, NVLink the all-reduces;
the exposition is dcgm-exporter's."""

from __future__ import annotations

import dataclasses

import pytest
from prometheus_client.parser import text_string_to_metric_families

from gpuplane.live.emulator.dcgm import FAMILIES, DcgmSettings, gpu_labels, render
from gpuplane.live.emulator.dcgm_model import (
    MIB,
    Counters,
    Deployment,
    energy_j,
    fb_used_bytes,
    fields,
    nvlink_bytes,
)
from gpuplane.live.emulator.settings import EmulatorSettings, build, deployment
from gpuplane.serving.inference_server import InferenceServerSpec


def dep(tp: int = 1, load_time_s: float = 60.0) -> Deployment:
    spec = InferenceServerSpec("vllm", "Llama-3.1-8B", "m", tensor_parallel_size=tp)
    s = EmulatorSettings(spec, "H100-80GB", load_time_s=load_time_s)
    built, load_s = build(s)
    return deployment(s, built, load_s)


def test_power_is_the_busy_shares_and_energy_its_integral() -> None:
    d = dep()
    b = d.board
    prev = Counters(100.0, busy_prefill_s=10.0, busy_decode_s=20.0)
    cur = Counters(110.0, busy_prefill_s=12.5, busy_decode_s=25.0)  # 25 % prefill, 50 % decode
    f = fields(d, prev, cur)
    assert f.gpu_util_pct == 75 and f.gr_engine_active == pytest.approx(0.75)
    assert f.power_w == pytest.approx(b.idle_w + (b.tdp_w - b.idle_w) * (0.25 + 0.6 * 0.5))
    assert f.power_w * 10.0 == pytest.approx(energy_j(d, cur) - energy_j(d, prev))
    assert f.energy_mj == int(energy_j(d, cur) * 1000)
    assert f.sm_clock_mhz == b.max_sm_clock_mhz
    assert f.dram_active == pytest.approx(0.35 * 0.25 + 0.85 * 0.5)
    assert f.tensor_active == pytest.approx(0.7 * 0.25 + 0.15 * 0.5)
    idle = fields(d, cur, dataclasses.replace(cur, t_s=120.0))
    assert (idle.gpu_util_pct, idle.power_w) == (0, b.idle_w)
    assert idle.sm_clock_mhz == b.idle_sm_clock_mhz and idle.gpu_temp_c == 30


def test_framebuffer_follows_the_cold_start_then_holds_the_whole_plan() -> None:
    d = dep(load_time_s=60.0)
    plan, load = d.plan, d.load
    assert 0 < load.weights_s < load.ready_s == 60.0
    assert fb_used_bytes(d, 0.0) == plan.non_torch_bytes
    half = fb_used_bytes(d, load.weights_s / 2)
    assert half == plan.non_torch_bytes + plan.weights_bytes // 2
    assert (
        fb_used_bytes(d, (load.weights_s + 60.0) / 2) == plan.non_torch_bytes + plan.weights_bytes
    )
    ready = fb_used_bytes(d, 60.0)
    kv = plan.num_gpu_blocks * plan.block_size * plan.kv_bytes_per_token
    assert ready == plan.weights_bytes + plan.non_torch_bytes + plan.activation_bytes + kv
    assert ready <= plan.requested_bytes  # vLLM stays within gpu_memory_utilization
    f = fields(d, Counters(59.0), Counters(61.0))
    assert f.fb_used_mib == ready // MIB and f.fb_used_mib + f.fb_free_mib == d.memory_mib
    rx = fields(d, Counters(0.0), Counters(1.0)).pcie_rx_bytes_per_s
    assert rx == round(d.load.storage_bytes_per_s)  # the weights, at the storage rate


def test_nvlink_counts_the_tensor_parallel_all_reduces() -> None:
    assert nvlink_bytes(dep(tp=1), 1000) == 0
    d = dep(tp=2)
    per_reduce = 1000 * d.hidden_size * d.dtype_bytes * 2 * (2 - 1) / 2
    assert nvlink_bytes(d, 1000) == int(2 * d.num_layers * per_reduce) > 0


def test_exposition_is_dcgm_exporters() -> None:
    d = dep(tp=2)
    s = DcgmSettings("node-a", pod="p", namespace="ns", container="c")
    labels = [gpu_labels(s, "NVIDIA H100 80GB HBM3", r) for r in range(2)]
    text = render(labels, fields(d, Counters(0.0), Counters(1.0)))
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert [f.name for f in FAMILIES] == list(families)
    assert "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{" in text  # no _total suffix
    power = next(line for line in text.splitlines() if line.startswith("DCGM_FI_DEV_POWER_USAGE{"))
    assert power.endswith(" 70.000000")  # a double field: six decimals
    sample = families["DCGM_FI_DEV_FB_USED"].samples[1]
    assert sample.labels["gpu"] == "1" and sample.labels["device"] == "nvidia1"
    assert (sample.labels["pod"], sample.labels["namespace"]) == ("p", "ns")
    assert gpu_labels(s, "x", 0) == gpu_labels(s, "x", 0) != gpu_labels(s, "x", 1)
    other = gpu_labels(dataclasses.replace(s, hostname="node-b"), "x", 0)
    assert other.split(",")[1] != gpu_labels(s, "x", 0).split(",")[1]  # a different UUID
