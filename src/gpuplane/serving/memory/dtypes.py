"""Which dtype an engine runs a model in, as vLLM resolves ``--dtype auto``.

``auto`` keeps the checkpoint's ``torch_dtype``, except that float32 checkpoints are served in a
16-bit type (float16 for embedding/pooling models, bfloat16 otherwise when the GPU has bfloat16,
i.e. compute capability 8.0 or newer). A bfloat16 checkpoint on an older GPU (V100, T4) falls back
to float16; asking for bfloat16 explicitly there is refused with vLLM's message.
"""

from __future__ import annotations

from gpuplane.core.errors import InputError
from gpuplane.serving.memory.vllm_defaults import KV_CACHE_DTYPE_BYTES
from gpuplane.serving.models.shape import DTYPE_BYTES, ModelShape
from gpuplane.topology.catalog import GpuModel

DTYPE_CHOICES = {
    "auto": "auto",
    "half": "float16",
    "float16": "float16",
    "bfloat16": "bfloat16",
    "float": "float32",
    "float32": "float32",
}


def has_bfloat16(gpu: GpuModel) -> bool:
    return gpu.compute_capability >= (8, 0)


def resolve_dtype(model: ModelShape, gpu: GpuModel, requested: str = "auto") -> str:
    """The dtype weights and activations are held in (float32, bfloat16 or float16)."""
    choice = DTYPE_CHOICES.get(requested)
    if choice is None:
        raise InputError(f"--dtype {requested!r}", expected=", ".join(DTYPE_CHOICES))
    if choice == "auto":
        dtype = model.config_dtype
        if dtype == "float32":
            dtype = "bfloat16" if model.is_decoder and has_bfloat16(gpu) else "float16"
        if dtype == "bfloat16" and not has_bfloat16(gpu):
            dtype = "float16"
        return dtype
    if choice == "bfloat16" and not has_bfloat16(gpu):
        major, minor = gpu.compute_capability
        raise InputError(
            "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
            f"Your {gpu.name} GPU has compute capability {major}.{minor}.",
            expected="--dtype float16 (vLLM: --dtype=half)",
        )
    return choice


def kv_dtype_bytes(kv_cache_dtype: str, dtype: str) -> float:
    """Bytes per KV element: the model dtype under ``auto``, one byte for the fp8 formats."""
    if kv_cache_dtype not in KV_CACHE_DTYPE_BYTES:
        raise InputError(
            f"--kv-cache-dtype {kv_cache_dtype!r}", expected=", ".join(KV_CACHE_DTYPE_BYTES)
        )
    fixed = KV_CACHE_DTYPE_BYTES[kv_cache_dtype]
    return DTYPE_BYTES[dtype] if fixed is None else fixed
