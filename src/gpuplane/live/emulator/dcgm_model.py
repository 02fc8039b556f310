"""What the emulated GPUs of one engine read, as DCGM would sample them (pure functions).

Every value comes from the emulated engine, the memory plan and the GPU model's catalog entry
(``topology/data/gpus.yaml``, ``board``); what is an assumption is in :class:`ActivityModel`:

- **Busy time**: ``Engine.busy_seconds`` (seconds a step was running, split into steps that
  computed a prompt chunk and decode-only steps). ``GPU_UTIL`` and ``PROF_GR_ENGINE_ACTIVE`` are
  the busy share of the interval between two collections (NVML: the share of time a kernel ran).
- **Power**: ``idle_w + (tdp_w - idle_w) x a`` with ``a`` the busy shares weighted by
  ``prefill_power`` (compute-bound steps draw TDP) and ``decode_power`` (memory-bound decode
  draws less); energy is the exact integral of the same model since the emulator started (mJ).
- **DRAM / tensor activity**: the busy shares weighted by the per-kind ratios below.
- **Framebuffer**: vLLM's memory plan per rank (``gpuplane serving memory``): during the weights
  phase of the cold start the CUDA context plus the weights loaded so far; from the start of
  init the whole weights; once ready weights + non-torch + activation peak + the KV pool, which
  vLLM allocates whole at start-up (so FB used stays flat while KV usage moves; that is
  ``vllm:kv_cache_usage_perc``).
- **Clocks**: the catalog's max SM clock when the GPU was busy in the interval, else its idle
  clock; the memory clock is the catalog's.
- **Temperature**: ``idle_temp_c`` plus a linear rise to ``tdp_temp_c`` with the interval's power.
- **PCIe**: the weights at the storage rate while they load; then 8 bytes (an int64 token id) per
  scheduled token in and per generated token out.
- **NVLink**: TP > 1 on an NVLink GPU: the ring all-reduces of the hidden states, two per layer,
  ``2 (tp-1)/tp x tokens x hidden x dtype bytes`` each, per rank (counted in bytes).
- Errors (XID, PCIe replays, remapped rows), encoder/decoder use and the vGPU licence are 0: an
  LLM engine does not use NVENC/NVDEC and no faults are emulated.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.serving.memory.budget import MemoryPlan
from gpuplane.topology.catalog import BoardSpec

MIB = 1 << 20
TOKEN_ID_BYTES = 8


@dataclass(frozen=True, slots=True)
class ActivityModel:
    """The assumptions (synthetic, not measured here): how hard each kind of step drives the GPU,
    as shares of the dynamic power range and as DCP activity ratios."""

    prefill_power: float = 1.0
    decode_power: float = 0.6
    prefill_dram: float = 0.35
    decode_dram: float = 0.85
    prefill_tensor: float = 0.7
    decode_tensor: float = 0.15
    idle_temp_c: float = 30.0
    tdp_temp_c: float = 72.0
    memory_temp_offset_c: float = 4.0


@dataclass(frozen=True, slots=True)
class Counters:
    """Cumulative engine counters at emulated time ``t_s`` (seconds since the emulator started)."""

    t_s: float
    busy_prefill_s: float = 0.0
    busy_decode_s: float = 0.0
    tokens_in: int = 0  # prompt tokens computed plus decode tokens scheduled
    tokens_out: int = 0  # tokens generated


@dataclass(frozen=True, slots=True)
class LoadPhases:
    """The cold start (emulated seconds): the weights arrive until ``weights_s``; ready at
    ``ready_s``."""

    weights_s: float
    ready_s: float
    storage_bytes_per_s: float


@dataclass(frozen=True, slots=True)
class Deployment:
    """What the fields depend on besides the counters."""

    board: BoardSpec
    memory_mib: int
    plan: MemoryPlan
    load: LoadPhases
    tp: int
    nvlink: bool
    hidden_size: int
    num_layers: int
    dtype_bytes: float
    activity: ActivityModel = ActivityModel()


@dataclass(frozen=True, slots=True)
class GpuFields:
    """One collection's values for one GPU (every TP rank runs the same steps)."""

    sm_clock_mhz: int
    mem_clock_mhz: int
    gpu_temp_c: int
    memory_temp_c: int
    power_w: float
    energy_mj: int
    gpu_util_pct: int
    mem_copy_util_pct: int
    fb_used_mib: int
    fb_free_mib: int
    gr_engine_active: float
    tensor_active: float
    dram_active: float
    pcie_tx_bytes_per_s: int
    pcie_rx_bytes_per_s: int
    nvlink_bytes: int


def energy_j(dep: Deployment, c: Counters) -> float:
    """Energy since start under the power model (exact: power is linear in the busy time)."""
    b, a = dep.board, dep.activity
    weighted = a.prefill_power * c.busy_prefill_s + a.decode_power * c.busy_decode_s
    return b.idle_w * c.t_s + (b.tdp_w - b.idle_w) * weighted


def fb_used_bytes(dep: Deployment, t_s: float) -> int:
    """Framebuffer in use per rank at ``t_s`` (the memory plan, as the cold start fills it)."""
    plan, load = dep.plan, dep.load
    if t_s >= load.ready_s:
        kv_pool = plan.num_gpu_blocks * plan.block_size * plan.kv_bytes_per_token
        return plan.weights_bytes + plan.non_torch_bytes + plan.activation_bytes + kv_pool
    loaded = 1.0 if t_s >= load.weights_s else t_s / load.weights_s
    return plan.non_torch_bytes + int(plan.weights_bytes * loaded)


def nvlink_bytes(dep: Deployment, tokens: int) -> int:
    """Bytes one rank moves over NVLink for the all-reduces of ``tokens`` tokens."""
    if dep.tp < 2 or not dep.nvlink:
        return 0
    per_reduce = tokens * dep.hidden_size * dep.dtype_bytes * 2 * (dep.tp - 1) / dep.tp
    return int(2 * dep.num_layers * per_reduce)


def fields(dep: Deployment, prev: Counters, cur: Counters) -> GpuFields:
    """The values DCGM reports at ``cur.t_s`` for the interval since ``prev``."""
    b, a = dep.board, dep.activity
    dt = cur.t_s - prev.t_s
    if dt > 0:
        prefill = min(1.0, (cur.busy_prefill_s - prev.busy_prefill_s) / dt)
        decode = min(1.0 - prefill, (cur.busy_decode_s - prev.busy_decode_s) / dt)
        power = (energy_j(dep, cur) - energy_j(dep, prev)) / dt
    else:
        prefill = decode = 0.0
        power = b.idle_w
    busy = prefill + decode
    dram = a.prefill_dram * prefill + a.decode_dram * decode
    tensor = a.prefill_tensor * prefill + a.decode_tensor * decode
    rise = (power - b.idle_w) / (b.tdp_w - b.idle_w) if b.tdp_w > b.idle_w else 0.0
    temp = a.idle_temp_c + (a.tdp_temp_c - a.idle_temp_c) * rise
    used = min(fb_used_bytes(dep, cur.t_s) // MIB, dep.memory_mib)
    return GpuFields(
        sm_clock_mhz=b.max_sm_clock_mhz if busy > 0 else b.idle_sm_clock_mhz,
        mem_clock_mhz=b.mem_clock_mhz,
        gpu_temp_c=round(temp),
        memory_temp_c=round(temp + a.memory_temp_offset_c),
        power_w=power,
        energy_mj=int(energy_j(dep, cur) * 1000),
        gpu_util_pct=round(100 * busy),
        mem_copy_util_pct=round(100 * dram),
        fb_used_mib=used,
        fb_free_mib=dep.memory_mib - used,
        gr_engine_active=busy,
        tensor_active=tensor,
        dram_active=dram,
        pcie_tx_bytes_per_s=_rate(TOKEN_ID_BYTES * (cur.tokens_out - prev.tokens_out), dt),
        pcie_rx_bytes_per_s=_pcie_rx(dep, prev, cur),
        nvlink_bytes=nvlink_bytes(dep, cur.tokens_in),
    )


def _rate(amount: float, dt: float) -> int:
    return round(amount / dt) if dt > 0 else 0


def _pcie_rx(dep: Deployment, prev: Counters, cur: Counters) -> int:
    """Host-to-device bytes per second: the weights while they load, then token ids."""
    load = dep.load
    dt = cur.t_s - prev.t_s
    loading = max(0.0, min(cur.t_s, load.weights_s) - prev.t_s)
    weights = loading * load.storage_bytes_per_s
    return _rate(weights + TOKEN_ID_BYTES * (cur.tokens_in - prev.tokens_in), dt)
