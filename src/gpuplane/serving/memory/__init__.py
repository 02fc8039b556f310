"""An LLM engine's GPU memory: vLLM's budget, KV-cache blocks and why an engine would not start.

``plan_memory(model, gpu, tp, settings)`` follows vLLM V1 step by step (requested memory, weights
per tensor-parallel rank, activation peak and non-torch memory, KV blocks, the max_model_len
check) and returns a :class:`MemoryPlan`; an engine that would fail to start raises
:class:`EngineStartError` with vLLM's own message.
"""

from gpuplane.serving.memory.budget import MemoryPlan, plan_memory
from gpuplane.serving.memory.dtypes import kv_dtype_bytes, resolve_dtype
from gpuplane.serving.memory.errors import EngineStartError
from gpuplane.serving.memory.settings import VllmMemorySettings
from gpuplane.serving.memory.sharding import check_tensor_parallel, weight_bytes_per_gpu
from gpuplane.serving.memory.vllm_defaults import default_batch_limits

__all__ = [
    "EngineStartError",
    "MemoryPlan",
    "VllmMemorySettings",
    "check_tensor_parallel",
    "default_batch_limits",
    "kv_dtype_bytes",
    "plan_memory",
    "resolve_dtype",
    "weight_bytes_per_gpu",
]
