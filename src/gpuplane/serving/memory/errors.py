"""Why an engine would not start, in the words vLLM (or PyTorch) uses.

Each is an :class:`EngineStartError`, a user mistake in the deployment (``InputError``), so the CLI
prints it and exits 2. The problem text is the real system's message; the expected part says
what to change.
"""

from __future__ import annotations

from gpuplane.core.errors import InputError
from gpuplane.core.units import GIB
from gpuplane.serving.models.shape import ModelShape

DOCS = "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."


class EngineStartError(InputError):
    """The engine as configured would fail during start-up (memory or parallelism)."""


def _gib(num_bytes: float) -> str:
    return f"{num_bytes / GIB:.2f}"


def not_enough_free_memory(free: int, total: int, utilization: float) -> EngineStartError:
    return EngineStartError(
        f"Free memory on device ({_gib(free)}/{_gib(total)} GiB) on startup is less than desired "
        f"GPU memory utilization ({utilization}, {_gib(total * utilization)} GiB). Decrease GPU "
        "memory utilization or reduce GPU memory used by other processes.",
        expected=f"--gpu-memory-utilization <= {free / total:.2f}",
    )


def weights_do_not_fit(
    model: str, tp: int, weights: int, total: int, free: int
) -> EngineStartError:
    return EngineStartError(
        f"torch.OutOfMemoryError: CUDA out of memory while loading {model} (TP={tp}): its "
        f"weights need {_gib(weights)} GiB per GPU and the GPU has a total capacity of "
        f"{_gib(total)} GiB of which {_gib(free)} GiB is free",
        expected="a larger --tp, a GPU with more memory, or a quantized checkpoint",
    )


def no_cache_memory(kv_bytes: int) -> EngineStartError:
    return EngineStartError(
        "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
        f"when initializing the engine. {DOCS}",
        expected=f"weights + activation + non-torch memory below the requested memory "
        f"({_gib(-kv_bytes)} GiB over)",
    )


def max_model_len_too_long(
    max_model_len: int, needed: int, available: int, longest: int
) -> EngineStartError:
    estimate = (
        f"Based on the available memory, the estimated maximum model length is {longest}. "
        if longest > 0
        else ""
    )
    return EngineStartError(
        f"To serve at least one request with the models's max seq len ({max_model_len}), "
        f"({_gib(needed)} GiB KV cache is needed, which is larger than the available KV cache "
        f"memory ({_gib(available)} GiB). {estimate}Try increasing `gpu_memory_utilization` or "
        f"decreasing `max_model_len` when initializing the engine. {DOCS}",
        expected=f"--max-model-len <= {longest} (the KV cache holds {longest} tokens)",
    )


def max_model_len_unsupported(requested: int, derived: int, model: ModelShape) -> EngineStartError:
    return EngineStartError(
        f"User-specified max_model_len ({requested}) is greater than the derived max_model_len "
        f"(max_position_embeddings={model.max_position_embeddings} in model's config.json, "
        f"{derived} after RoPE scaling). To allow overriding this maximum, set the env var "
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.",
        expected=f"--max-model-len <= {derived}",
    )
