"""Engine settings: the scheduler and KV-cache knobs of vLLM V1 and SGLang, with their defaults.

One model covers both engines; ``kind`` picks the scheduler. Field names follow vLLM's CLI flags
(``--max-num-seqs``, ``--max-num-batched-tokens``, ``--long-prefill-token-threshold``,
``--enable-prefix-caching``, ``--block-size``) and SGLang's (``--max-running-requests`` is
``max_num_seqs`` here, ``--chunked-prefill-size``, ``--max-prefill-tokens``,
``--schedule-policy``, ``--schedule-conservativeness``, ``--page-size`` is ``block_size``).

The KV capacity (``num_gpu_blocks``) comes from the memory model (another part of gpuplane), as
vLLM computes it from the memory left after weights and activations.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

GIB = 1 << 30

# SGLang python/sglang/global_config.py: new-token-ratio estimation constants.
SGLANG_INIT_NEW_TOKEN_RATIO = 0.7
SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR = 0.14
SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS = 600
SGLANG_CLIP_MAX_NEW_TOKENS = 4096  # SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION
SGLANG_LPM_FALLBACK_QUEUE = 128  # lpm falls back to fcfs above this many waiting requests


class EngineConfig(BaseModel):
    """How one engine instance (one vLLM or SGLang server) schedules and caches."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["vllm", "sglang"] = Field("vllm", description="Which engine's scheduler.")
    model_name: str = Field("model", description="Served model name (the model_name label).")
    engine_index: int = Field(0, ge=0, description="Data-parallel index (vLLM's engine label).")
    num_gpu_blocks: int = Field(gt=0, description="KV cache blocks (pages) on this engine.")
    block_size: int | None = Field(
        None, gt=0, description="Tokens per KV block; default 16 (vLLM) or 1 (SGLang page_size)."
    )
    max_model_len: int = Field(gt=1, description="Longest prompt + output the engine accepts.")
    max_num_seqs: int = Field(
        256, gt=0, description="Most requests running at once (SGLang: max_running_requests)."
    )
    max_num_batched_tokens: int = Field(
        2048, gt=0, description="vLLM token budget per step (OpenAI-server default 2048 or 8192)."
    )
    long_prefill_token_threshold: int = Field(
        0, ge=0, description="vLLM: cap on prompt tokens one request gets per step (0 = off)."
    )
    enable_prefix_caching: bool = Field(True, description="Reuse KV blocks of shared prefixes.")
    chunked_prefill_size: int = Field(
        8192, description="SGLang: most prompt tokens per prefill batch chunk (-1 = no chunking)."
    )
    max_prefill_tokens: int = Field(
        16384, gt=0, description="SGLang: most prompt tokens in one prefill batch."
    )
    schedule_policy: Literal["fcfs", "lpm"] = Field(
        "fcfs", description="SGLang waiting-queue order: fcfs, or longest prefix match first."
    )
    schedule_conservativeness: float = Field(
        1.0, ge=0, description="SGLang: scales the initial new-token ratio."
    )

    @model_validator(mode="after")
    def _check(self) -> EngineConfig:
        if self.num_gpu_blocks * self.page_tokens < self.max_model_len:
            raise ValueError(
                f"the KV cache holds {self.num_gpu_blocks * self.page_tokens} tokens, fewer than "
                f"max_model_len={self.max_model_len}: the engine could not serve one full-length "
                "request (vLLM refuses to start in this case)"
            )
        if self.kind == "sglang" and self.chunked_prefill_size == 0:
            raise ValueError("chunked_prefill_size must be positive or -1 (disabled)")
        return self

    @property
    def page_tokens(self) -> int:
        """Tokens per block: ``block_size`` or the engine's default (16 vLLM, 1 SGLang)."""
        if self.block_size is not None:
            return self.block_size
        return 16 if self.kind == "vllm" else 1

    @property
    def capacity_tokens(self) -> int:
        return self.num_gpu_blocks * self.page_tokens


def vllm_default_limits(gpu_memory_bytes: int, gpu_name: str) -> tuple[int, int]:
    """vLLM's OpenAI-server defaults ``(max_num_batched_tokens, max_num_seqs)`` for a GPU.

    ``EngineArgs.get_batch_defaults`` (vllm/engine/arg_utils.py): GPUs with at least 70 GiB that
    are not A100 (H100, H200, MI300X) get 8192 tokens and 1024 sequences; others 2048 and 256 (an
    A100 is kept on the small budget because a larger one lowered its throughput, PR #17885).
    """
    if gpu_memory_bytes >= 70 * GIB and "a100" not in gpu_name.lower():
        return 8192, 1024
    return 2048, 256
