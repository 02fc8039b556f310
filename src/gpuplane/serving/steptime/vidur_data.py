"""Readers for Vidur's measured profiles (microsoft/vidur ``data/profiling``; MIT licence).

Layout (see ``shared/data/vidur/SOURCES.md``): ``compute/<gpu>/<org>/<model>/mlp.csv`` holds every
non-attention operator of one decoder layer on one GPU for each (TP degree, token count);
``a100/attention.csv`` holds FlashAttention prefill and decode calls for one shape (TP 2);
``network/<node>/all_reduce.csv`` NCCL all-reduces; ``a100/cpu_overheads.csv`` engine CPU times.
Every time column is milliseconds; only the medians are read (Vidur trains on them too). These
readers do I/O and nothing else; fitting lives in ``fit.py``.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import read_user_text

Array = npt.NDArray[np.float64]
MLP_OPS = (
    "emb",
    "input_layernorm",
    "attn_pre_proj",
    "attn_rope",
    "attn_post_proj",
    "post_attention_layernorm",
    "mlp_up_proj",
    "mlp_act",
    "mlp_down_proj",
    "add",
)
GPU_DIRS = {"a100": "A100-SXM4-80GB", "h100": "H100-80GB-SXM"}
NETWORK_NODES = ("a100_dgx", "a100_pairwise_nvlink", "h100_dgx", "h100_pairwise_nvlink")


@dataclass(frozen=True, slots=True)
class MlpProfile:
    """One ``mlp.csv``: per-layer operator medians (seconds) by TP degree and token count."""

    family: str
    model: str
    n_head: int
    n_kv_head: int
    n_embd: int
    n_expanded_embd: int
    gated: bool
    tp: Array
    tokens: Array
    times: dict[str, Array]


@dataclass(frozen=True, slots=True)
class AttentionProfile:
    """A100, TP 2, 64 query / 8 KV heads of 128: prefill (chunk, cached) and decode (batch, ctx)."""

    n_embd: int
    n_q_head: int
    n_kv_head: int
    tp: int
    prefill_chunk: Array
    prefill_context: Array
    prefill_s: Array
    decode_batch: Array
    decode_context: Array
    decode_s: Array


@dataclass(frozen=True, slots=True)
class AllReduceProfile:
    node: str
    num_gpus: Array
    size_bytes: Array
    time_s: Array


@dataclass(frozen=True, slots=True)
class CpuOverheadProfile:
    batch_size: Array
    overhead_s: Array
    """schedule + prepare inputs + sampler + output processing (medians)."""
    model_execution_s: Array


def _rows(path: Path) -> list[dict[str, str]]:
    try:
        text = read_user_text(path)
    except OSError as err:
        raise InputError(
            f"cannot read: {err.strerror}",
            expected="Vidur's profiling CSV",
            location=Location(str(path)),
        ) from None
    return list(csv.DictReader(io.StringIO(text, newline="")))


def _column(rows: list[dict[str, str]], key: str, path: Path, scale: float = 1.0) -> Array:
    try:
        return np.array([float(r[key]) * scale if r[key] != "" else np.nan for r in rows])
    except (KeyError, ValueError) as err:
        raise InputError(
            f"column {key!r} missing or not numeric ({err})",
            expected="Vidur's profiling CSV layout",
            location=Location(str(path)),
        ) from None


def load_mlp_profiles(root: Path) -> list[MlpProfile]:
    """Every ``compute/<gpu>/<org>/<model>/mlp.csv`` under ``root`` (the vidur data folder)."""
    profiles = []
    for family in GPU_DIRS:
        for path in sorted((root / "profiling/compute" / family).glob("*/*/mlp.csv")):
            rows = _rows(path)
            if not rows:
                continue
            first = rows[0]
            times = {
                op: _column(rows, f"time_stats.{op}.median", path, 1e-3)
                for op in MLP_OPS
                if f"time_stats.{op}.median" in first
            }
            profiles.append(
                MlpProfile(
                    family=family,
                    model=f"{path.parent.parent.name}/{path.parent.name}",
                    n_head=int(first["n_head"]),
                    n_kv_head=int(first["n_kv_head"]),
                    n_embd=int(first["n_embd"]),
                    n_expanded_embd=int(first["n_expanded_embd"]),
                    gated=first["use_gated_mlp"] == "True",
                    tp=_column(rows, "num_tensor_parallel_workers", path),
                    tokens=_column(rows, "num_tokens", path),
                    times=times,
                )
            )
    if not profiles:
        raise InputError(
            "no mlp.csv profiles found",
            expected="Vidur's data folder (profiling/compute/<gpu>/<org>/<model>/mlp.csv)",
            location=Location(str(root)),
        )
    return profiles


def load_attention_profile(root: Path) -> AttentionProfile:
    path = root / "profiling/a100/attention.csv"
    rows = _rows(path)
    prefill = [r for r in rows if r["is_prefill"] == "True"]
    decode = [r for r in rows if r["is_prefill"] != "True"]
    first = rows[0]
    return AttentionProfile(
        n_embd=int(first["n_embd"]),
        n_q_head=int(first["n_q_head"]),
        n_kv_head=int(first["n_kv_head"]),
        tp=int(first["num_tensor_parallel_workers"]),
        prefill_chunk=_column(prefill, "prefill_chunk_size", path),
        prefill_context=_column(prefill, "kv_cache_size", path),
        prefill_s=_column(prefill, "time_stats.attn_prefill.median", path, 1e-3),
        decode_batch=_column(decode, "batch_size", path),
        decode_context=_column(decode, "kv_cache_size", path),
        decode_s=_column(decode, "time_stats.attn_decode.median", path, 1e-3),
    )


def load_all_reduce_profiles(root: Path) -> list[AllReduceProfile]:
    """Single-node all-reduces (``num_workers == devices_per_node``), as Vidur uses them."""
    out = []
    for node in NETWORK_NODES:
        path = root / "profiling/network" / node / "all_reduce.csv"
        rows = [r for r in _rows(path) if r["num_workers"] == r["devices_per_node"]]
        out.append(
            AllReduceProfile(
                node=node,
                num_gpus=_column(rows, "num_workers", path),
                size_bytes=_column(rows, "size", path),
                time_s=_column(rows, "time_stats.all_reduce.median", path, 1e-3),
            )
        )
    return out


def load_cpu_overheads(root: Path) -> CpuOverheadProfile:
    path = root / "profiling/a100/cpu_overheads.csv"
    rows = _rows(path)
    parts = ("schedule", "sampler_e2e", "prepare_inputs_e2e", "process_model_outputs")
    overhead = sum(_column(rows, f"{p}_median", path, 1e-3) for p in parts)
    return CpuOverheadProfile(
        batch_size=_column(rows, "batch_size", path),
        overhead_s=np.asarray(overhead, dtype=np.float64),
        model_execution_s=_column(rows, "model_execution_e2e_median", path, 1e-3),
    )
