"""vLLM's (V1) GPU memory budget and KV-cache sizing, step by step as the engine does it.

1. ``requested = total x gpu_memory_utilization`` (a fraction of the GPU's *total* memory). The
   engine refuses to start if less than that is free (other processes hold the rest).
2. It loads the weights (one tensor-parallel shard per GPU): a GPU too small for them fails with
   CUDA out-of-memory.
3. A profiling run measures the activation peak and non-torch memory; what is left,
   ``requested - weights - activation - non_torch``, is the KV cache. Nothing left: "No available
   memory for the cache blocks".
4. ``num_gpu_blocks = floor(kv / (page_size x layers))`` with
   ``page_size = 2 x block_size x kv_heads_per_gpu x head_dim x kv_dtype_bytes`` per layer.
5. One request of ``max_model_len`` tokens must fit (``ceil(max_model_len / block_size)``
   blocks), else the engine stops and names the longest length that would fit.
6. It logs ``GPU KV cache size: <blocks x block_size> tokens`` and
   ``Maximum concurrency for <max_model_len> tokens per request: <blocks / blocks per request>x``.
(vllm: v1/worker/gpu_worker.py determine_available_memory, v1/core/kv_cache_utils.py.)
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.core.units import GIB
from gpuplane.serving.memory.dtypes import kv_dtype_bytes, resolve_dtype
from gpuplane.serving.memory.errors import (
    max_model_len_too_long,
    max_model_len_unsupported,
    no_cache_memory,
    not_enough_free_memory,
    weights_do_not_fit,
)
from gpuplane.serving.memory.estimates import activation_peak_bytes, non_torch_bytes
from gpuplane.serving.memory.settings import VllmMemorySettings
from gpuplane.serving.memory.sharding import check_tensor_parallel, weight_bytes_per_gpu
from gpuplane.serving.memory.total import cuda_total_bytes
from gpuplane.serving.memory.vllm_defaults import default_batch_limits
from gpuplane.serving.models.shape import DTYPE_BYTES, ModelShape
from gpuplane.topology.catalog import GpuModel


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    """One GPU of an engine: where its memory goes and how many KV blocks that leaves."""

    model: str
    gpu: str
    tp: int
    dtype: str
    kv_cache_dtype: str
    total_bytes: int
    requested_bytes: int
    weights_bytes: int
    activation_bytes: int
    non_torch_bytes: int
    kv_cache_bytes: int
    block_size: int
    num_layers: int
    kv_bytes_per_token: int
    """KV bytes one token takes on one GPU (this rank's heads, every layer)."""
    kv_bytes_per_token_model: int
    """KV bytes one token takes over the whole model (all KV heads, no replication)."""
    num_gpu_blocks: int
    max_model_len: int
    max_num_batched_tokens: int
    max_num_seqs: int
    sources: dict[str, str]
    """Where each part came from: "given", "estimate" or a data source."""

    @property
    def page_size_bytes(self) -> int:
        """Bytes of one block in one layer."""
        return self.block_size * self.kv_bytes_per_token // max(self.num_layers, 1)

    @property
    def kv_cache_tokens(self) -> int:
        return self.num_gpu_blocks * self.block_size

    @property
    def blocks_per_request(self) -> int:
        return -(-self.max_model_len // self.block_size)

    @property
    def max_concurrency(self) -> float | None:
        """Requests of ``max_model_len`` tokens the KV cache holds at once (None: no KV cache)."""
        if self.kv_bytes_per_token == 0:
            return None
        return self.num_gpu_blocks / self.blocks_per_request

    def log_lines(self) -> list[str]:
        """The lines vLLM logs for this budget (memory profile, KV size, concurrency)."""
        gib = GIB
        lines = [
            f"the current vLLM instance can use total_gpu_memory ({self.total_bytes / gib:.2f}GiB)"
            f" x gpu_memory_utilization ({self.requested_bytes / self.total_bytes:.2f})"
            f" = {self.requested_bytes / gib:.2f}GiB",
            f"model weights take {self.weights_bytes / gib:.2f}GiB; non_torch_memory takes "
            f"{self.non_torch_bytes / gib:.2f}GiB; PyTorch activation peak memory takes "
            f"{self.activation_bytes / gib:.2f}GiB; the rest of the memory reserved for KV Cache "
            f"is {self.kv_cache_bytes / gib:.2f}GiB.",
        ]
        if self.max_concurrency is not None:
            lines += [
                f"GPU KV cache size: {self.kv_cache_tokens:,} tokens",
                f"Maximum concurrency for {self.max_model_len:,} tokens per request: "
                f"{self.max_concurrency:.2f}x",
            ]
        return lines


def plan_memory(
    model: ModelShape, gpu: GpuModel, tp: int, settings: VllmMemorySettings | None = None
) -> MemoryPlan:
    """The memory plan of one engine GPU; an engine that would not start raises EngineStartError."""
    s = settings or VllmMemorySettings()
    check_tensor_parallel(model, tp)
    dtype = resolve_dtype(model, gpu, s.dtype)
    kv_width = kv_dtype_bytes(s.kv_cache_dtype, dtype)
    max_len = _max_model_len(model, s)
    tokens, seqs = default_batch_limits(gpu)
    tokens = s.max_num_batched_tokens or tokens
    seqs = s.max_num_seqs or seqs
    sources: dict[str, str] = {}
    total, sources["total"] = (
        (s.gpu_memory_bytes, "given") if s.gpu_memory_bytes is not None else cuda_total_bytes(gpu)
    )
    free = total - s.other_processes_bytes
    if free < total * s.gpu_memory_utilization:
        raise not_enough_free_memory(free, total, s.gpu_memory_utilization)
    weights, activation, non_torch = _non_kv_parts(
        model, tp, s, DTYPE_BYTES[dtype], (tokens, seqs), (total, free), sources
    )
    kv_cache = int(total * s.gpu_memory_utilization - (weights + activation + non_torch))
    per_token = model.kv_bytes_per_token(tp, kv_width)
    return MemoryPlan(
        model=model.name,
        gpu=gpu.name,
        tp=tp,
        dtype=dtype,
        kv_cache_dtype=dtype if s.kv_cache_dtype == "auto" else s.kv_cache_dtype,
        total_bytes=total,
        requested_bytes=int(total * s.gpu_memory_utilization),
        weights_bytes=weights,
        activation_bytes=activation,
        non_torch_bytes=non_torch,
        kv_cache_bytes=max(kv_cache, 0),
        block_size=s.block_size,
        num_layers=model.num_layers,
        kv_bytes_per_token=per_token,
        kv_bytes_per_token_model=model.kv_bytes_per_token(1, kv_width),
        num_gpu_blocks=_num_blocks(kv_cache, per_token, s.block_size, max_len),
        max_model_len=max_len,
        max_num_batched_tokens=tokens,
        max_num_seqs=seqs,
        sources=sources,
    )


def _non_kv_parts(
    model: ModelShape,
    tp: int,
    s: VllmMemorySettings,
    dtype_bytes: float,
    batch: tuple[int, int],
    memory: tuple[int, int],
    sources: dict[str, str],
) -> tuple[int, int, int]:
    """(weights, activation peak, non-torch) bytes: given figures, else computed/estimated."""
    total, free = memory
    weights = s.weights_bytes
    sources["weights"] = "given" if weights is not None else "computed from the shape"
    if weights is None:
        weights = weight_bytes_per_gpu(model, tp, dtype_bytes)
    if weights > free:
        raise weights_do_not_fit(model.name, tp, weights, total, free)
    activation = s.activation_bytes
    sources["activation"] = "given" if activation is not None else "estimate"
    if activation is None:
        activation = activation_peak_bytes(
            model,
            tp,
            max_num_batched_tokens=batch[0],
            max_num_seqs=batch[1],
            dtype_bytes=dtype_bytes,
        )
    non_torch = s.non_torch_bytes
    sources["non_torch"] = "given" if non_torch is not None else "default"
    if non_torch is None:
        non_torch = non_torch_bytes(tp)
    return weights, activation, non_torch


def _num_blocks(kv_cache: int, per_token: int, block_size: int, max_len: int) -> int:
    """KV blocks in ``kv_cache`` bytes; refuses a cache too small for one max-length request."""
    if not per_token:
        return 0  # no KV cache (encoder-only model): vLLM skips these checks
    if kv_cache <= 0:
        raise no_cache_memory(kv_cache)
    blocks = kv_cache // (block_size * per_token)
    needed = -(-max_len // block_size) * block_size * per_token
    if needed > kv_cache:
        raise max_model_len_too_long(max_len, needed, kv_cache, blocks * block_size)
    return blocks


def _max_model_len(model: ModelShape, s: VllmMemorySettings) -> int:
    derived = model.derived_max_model_len
    if s.max_model_len is None:
        return derived
    if s.max_model_len > derived:
        raise max_model_len_unsupported(s.max_model_len, derived, model)
    return s.max_model_len
