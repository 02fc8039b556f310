"""A memory plan as plain data (what ``gpuplane serving memory --json`` prints)."""

from __future__ import annotations

from typing import Any

from gpuplane.core.units import GIB
from gpuplane.serving.memory.budget import MemoryPlan


def _gib(num_bytes: int) -> float:
    return round(num_bytes / GIB, 3)


def memory_report(plan: MemoryPlan, gpu_memory_utilization: float) -> dict[str, Any]:
    concurrency = plan.max_concurrency
    return {
        "model": plan.model,
        "gpu": plan.gpu,
        "tp": plan.tp,
        "dtype": plan.dtype,
        "kv_cache_dtype": plan.kv_cache_dtype,
        "gpu_memory_utilization": gpu_memory_utilization,
        "total_gib": _gib(plan.total_bytes),
        "requested_gib": _gib(plan.requested_bytes),
        "weights_gib": _gib(plan.weights_bytes),
        "activation_gib": _gib(plan.activation_bytes),
        "non_torch_gib": _gib(plan.non_torch_bytes),
        "kv_cache_gib": _gib(plan.kv_cache_bytes),
        "block_size": plan.block_size,
        "kv_bytes_per_token": plan.kv_bytes_per_token,
        "kv_bytes_per_token_model": plan.kv_bytes_per_token_model,
        "page_size_bytes": plan.page_size_bytes,
        "num_gpu_blocks": plan.num_gpu_blocks,
        "kv_cache_tokens": plan.kv_cache_tokens,
        "max_model_len": plan.max_model_len,
        "max_concurrency": None if concurrency is None else round(concurrency, 4),
        "max_num_batched_tokens": plan.max_num_batched_tokens,
        "max_num_seqs": plan.max_num_seqs,
        "sources": plan.sources,
        "log": plan.log_lines(),
    }
