"""Vidur's measurements turned into (operator work, measured time) samples per GPU family.

Each measured row becomes the same ``Work`` (FLOPs and bytes) the step-time model computes for
that operator, using the catalog shape of the profiled model (checked against the shape columns of
the CSV) and the row's TP degree and token count. The calibration fits these samples, and the
fidelity benchmark predicts them, through the same code the engine model uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from gpuplane.core.errors import InputError
from gpuplane.core.units import pcie_gbps
from gpuplane.serving.models.catalog import default_catalog
from gpuplane.serving.models.shape import ModelShape
from gpuplane.serving.steptime.interconnect import Interconnect
from gpuplane.serving.steptime.model import peak_flops
from gpuplane.serving.steptime.operators import (
    LayerDims,
    Op,
    Work,
    decode_attention_work,
    elementwise_work,
    gemm_work,
    prefill_attention_work,
)
from gpuplane.serving.steptime.vidur_data import (
    GPU_DIRS,
    AllReduceProfile,
    CpuOverheadProfile,
    MlpProfile,
    load_all_reduce_profiles,
    load_attention_profile,
    load_cpu_overheads,
    load_mlp_profiles,
)
from gpuplane.topology.catalog import get_gpu_model
from gpuplane.topology.presets import load_preset

Array = npt.NDArray[np.float64]
PROFILE_DTYPE_BYTES = 2.0  # Vidur profiled fp16 kernels
VIDUR_OPS: dict[str, Op] = {
    "emb": Op.EMBEDDING,
    "input_layernorm": Op.NORM,
    "post_attention_layernorm": Op.NORM,
    "attn_pre_proj": Op.QKV_PROJ,
    "attn_rope": Op.ROPE,
    "attn_post_proj": Op.O_PROJ,
    "mlp_up_proj": Op.GATE_UP_PROJ,
    "mlp_act": Op.ACT,
    "mlp_down_proj": Op.DOWN_PROJ,
    "add": Op.RESIDUAL_ADD,
}
GEMM_OPS = (Op.QKV_PROJ, Op.O_PROJ, Op.GATE_UP_PROJ, Op.DOWN_PROJ)
ATTENTION_MODEL = "Llama-2-70B"  # the shape of attention.csv: hidden 8192, 64 q / 8 kv heads
DGX_PRESETS = {"a100_dgx": "dgx-a100", "h100_dgx": "dgx-h100"}
# Boards without a preset: 4 PCIe cards joined in pairs by NVLink bridges (600 GB/s both ways),
# the pairs connected over PCIe (Gen4 x16 for A100 PCIe, Gen5 x16 for H100 NVL).
PAIRWISE = {
    "a100_pairwise_nvlink": {
        2: Interconnect(2, 300.0, "nvlink", "A100 PCIe pair over an NVLink bridge"),
        4: Interconnect(4, pcie_gbps(4, 16), "pcie", "two NVLink pairs joined over PCIe Gen4"),
    },
    "h100_pairwise_nvlink": {
        2: Interconnect(2, 300.0, "nvlink", "H100 NVL pair over an NVLink bridge"),
        4: Interconnect(4, pcie_gbps(5, 16), "pcie", "two NVLink pairs joined over PCIe Gen5"),
    },
}


@dataclass(frozen=True, slots=True)
class Samples:
    """Measured kernels of one operator class on one GPU family."""

    family: str
    op: str
    work: Work
    measured_s: Array
    model: npt.NDArray[np.str_]
    source_op: npt.NDArray[np.str_]
    tp: Array
    tokens: Array


@dataclass(frozen=True, slots=True)
class CollectiveSamples:
    family: str
    kind: str
    node: npt.NDArray[np.str_]
    num_gpus: Array
    bottleneck_gbps: Array
    size_bytes: Array
    measured_s: Array


@dataclass(frozen=True, slots=True)
class VidurDataset:
    ops: dict[tuple[str, str], Samples]
    collectives: dict[tuple[str, str], CollectiveSamples]
    overhead: CpuOverheadProfile
    peaks: dict[str, tuple[float, float]]
    """family -> (peak FLOP/s, HBM bytes/s) of the measured GPU."""


def _arr(value: float | Array, size: int) -> Array:
    return np.broadcast_to(np.asarray(value, dtype=np.float64), (size,)).copy()


def _concat(parts: list[Work], sizes: list[int]) -> Work:
    return Work(
        np.concatenate([_arr(p.flops, n) for p, n in zip(parts, sizes, strict=True)]),
        np.concatenate([_arr(p.bytes, n) for p, n in zip(parts, sizes, strict=True)]),
        np.concatenate([_arr(p.causal_flops, n) for p, n in zip(parts, sizes, strict=True)]),
    )


def _shape_of(profile: MlpProfile) -> ModelShape:
    catalog = default_catalog()
    entry = catalog.by_vidur(profile.model)
    if entry is None:
        raise InputError(
            f"Vidur profile {profile.model!r} has no catalog model",
            expected="a model listed with `vidur:` in serving/data/model_catalog.yaml",
        )
    shape = catalog.shape(entry)
    found = (shape.hidden_size, shape.num_attention_heads, shape.num_kv_heads)
    if found != (profile.n_embd, profile.n_head, profile.n_kv_head) or (
        shape.intermediate_size != profile.n_expanded_embd
    ):
        raise InputError(
            f"catalog shape of {entry.name} differs from Vidur's {profile.model} profile",
            expected="the same hidden size, heads and MLP width",
        )
    return shape


def _op_work(op: Op, dims: LayerDims, tokens: Array) -> Work:
    if op in GEMM_OPS:
        k, n = dims.gemm_shapes()[op]
        return gemm_work(tokens, k, n, PROFILE_DTYPE_BYTES)
    return elementwise_work(op, dims, tokens)


def _mlp_samples(profiles: list[MlpProfile]) -> dict[tuple[str, str], Samples]:
    parts: dict[tuple[str, str], list[tuple[Work, Array, str, str, Array, Array]]] = {}
    for profile in profiles:
        shape = _shape_of(profile)
        for tp in np.unique(profile.tp):
            rows = profile.tp == tp
            dims = LayerDims.of(shape, int(tp), PROFILE_DTYPE_BYTES)
            tokens = profile.tokens[rows]
            for vidur_op, times in profile.times.items():
                op = VIDUR_OPS[vidur_op]
                keep = np.isfinite(times[rows]) & (times[rows] > 0)
                work = _op_work(op, dims, tokens[keep])
                item = (
                    work,
                    times[rows][keep],
                    profile.model,
                    vidur_op,
                    tokens[keep] * 0 + tp,
                    tokens[keep],
                )
                parts.setdefault((profile.family, op.value), []).append(item)
                if op in GEMM_OPS:
                    parts.setdefault((profile.family, Op.GEMM.value), []).append(item)
    return {key: _samples(key, items) for key, items in parts.items()}


def _samples(
    key: tuple[str, str], items: list[tuple[Work, Array, str, str, Array, Array]]
) -> Samples:
    sizes = [len(i[1]) for i in items]
    return Samples(
        family=key[0],
        op=key[1],
        work=_concat([i[0] for i in items], sizes),
        measured_s=np.concatenate([i[1] for i in items]),
        model=np.concatenate([np.full(n, i[2]) for i, n in zip(items, sizes, strict=True)]),
        source_op=np.concatenate([np.full(n, i[3]) for i, n in zip(items, sizes, strict=True)]),
        tp=np.concatenate([i[4] for i in items]),
        tokens=np.concatenate([i[5] for i in items]),
    )


def _attention_samples(root: Path) -> dict[tuple[str, str], Samples]:
    prof = load_attention_profile(root)
    shape = default_catalog().shape(default_catalog().entries[ATTENTION_MODEL])
    assert (shape.hidden_size, shape.num_attention_heads, shape.num_kv_heads) == (
        prof.n_embd,
        prof.n_q_head,
        prof.n_kv_head,
    )
    dims = LayerDims.of(shape, prof.tp, PROFILE_DTYPE_BYTES)
    c, k = prof.prefill_chunk, prof.prefill_context
    keep = np.isfinite(prof.prefill_s) & (prof.prefill_s > 0)
    c, k = c[keep], k[keep]
    pre = prefill_attention_work(dims, c, k, rect=c * k, tri=c * (c + 1) / 2)
    b, ctx = prof.decode_batch, prof.decode_context
    dkeep = np.isfinite(prof.decode_s) & (prof.decode_s > 0)
    dec = decode_attention_work(dims, b[dkeep], b[dkeep] * ctx[dkeep])
    name = f"attention ({ATTENTION_MODEL} shape)"
    out = {}
    for op, work, measured, tokens in (
        (Op.ATTENTION_PREFILL, pre, prof.prefill_s[keep], c),
        (Op.ATTENTION_DECODE, dec, prof.decode_s[dkeep], b[dkeep]),
    ):
        n = len(measured)
        out[("a100", op.value)] = Samples(
            "a100",
            op.value,
            _concat([work], [n]),
            measured,
            np.full(n, name),
            np.full(n, op.value),
            np.full(n, float(prof.tp)),
            tokens,
        )
    return out


def _interconnect(node: str, n: int) -> Interconnect:
    if node in DGX_PRESETS:
        return Interconnect.from_topology(load_preset(DGX_PRESETS[node]), list(range(n)))
    return PAIRWISE[node][n]


def _collective_samples(
    profiles: list[AllReduceProfile],
) -> dict[tuple[str, str], CollectiveSamples]:
    parts: dict[tuple[str, str], list[tuple[str, Array, Array, Array, Array]]] = {}
    for prof in profiles:
        family = prof.node.split("_")[0]
        for n in np.unique(prof.num_gpus):
            rows = (prof.num_gpus == n) & (prof.time_s > 0)
            link = _interconnect(prof.node, int(n))
            bw = np.full(int(rows.sum()), link.bottleneck_gbps)
            parts.setdefault((family, link.link_kind), []).append(
                (prof.node, prof.num_gpus[rows], bw, prof.size_bytes[rows], prof.time_s[rows])
            )
    return {
        key: CollectiveSamples(
            key[0],
            key[1],
            np.concatenate([np.full(len(i[1]), i[0]) for i in items]),
            np.concatenate([i[1] for i in items]),
            np.concatenate([i[2] for i in items]),
            np.concatenate([i[3] for i in items]),
            np.concatenate([i[4] for i in items]),
        )
        for key, items in parts.items()
    }


def load_dataset(root: Path) -> VidurDataset:
    """Everything the calibration fits, from Vidur's data folder ``root``."""
    ops = _mlp_samples(load_mlp_profiles(root))
    ops.update(_attention_samples(root))
    peaks = {}
    for family, gpu_name in GPU_DIRS.items():
        gpu = get_gpu_model(gpu_name)
        peaks[family] = (peak_flops(gpu, "float16"), gpu.hbm_gbps * 1e9)
    return VidurDataset(
        ops=ops,
        collectives=_collective_samples(load_all_reduce_profiles(root)),
        overhead=load_cpu_overheads(root),
        peaks=peaks,
    )
