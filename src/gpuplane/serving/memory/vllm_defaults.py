"""vLLM's defaults that size the engine's memory, as ``vllm serve`` applies them.

- ``gpu_memory_utilization`` 0.9: the fraction of the GPU's *total* memory the instance may use
  (released versions; a 2025 main snapshot shows 0.92 -- pass the flag to model that).
- ``block_size`` 16 tokens per KV block on CUDA (``CacheConfig.DEFAULT_BLOCK_SIZE``).
- ``max_num_batched_tokens`` / ``max_num_seqs`` for the OpenAI server: 8192 / 1024 on GPUs with at
  least 70 GiB that are not A100s (H100, H200, B200 ...), 2048 / 256 elsewhere
  (``EngineArgs.get_batch_defaults``; A100s keep the small budget because a larger one lowered
  their throughput, vLLM PR #17885).
- vocabulary tables are padded to a multiple of 64 rows before tensor-parallel sharding
  (``VocabParallelEmbedding``).
"""

from __future__ import annotations

from gpuplane.core.units import GIB
from gpuplane.topology.catalog import GpuModel

DEFAULT_GPU_MEMORY_UTILIZATION = 0.9
DEFAULT_BLOCK_SIZE = 16
BLOCK_SIZES = (1, 8, 16, 32, 64, 128)
VOCAB_PADDING = 64
LARGE_GPU_BYTES = 70 * GIB

# --kv-cache-dtype: "auto" keeps the model dtype; the fp8 formats store one byte per element.
KV_CACHE_DTYPE_BYTES: dict[str, float | None] = {
    "auto": None,
    "fp8": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
}


def default_batch_limits(gpu: GpuModel) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) that ``vllm serve`` picks for this GPU."""
    large = gpu.memory_mib * 1024 * 1024 >= LARGE_GPU_BYTES
    if large and "a100" not in gpu.name.lower():
        return 8192, 1024
    return 2048, 256


def padded_vocab(vocab_size: int) -> int:
    return -(-vocab_size // VOCAB_PADDING) * VOCAB_PADDING
