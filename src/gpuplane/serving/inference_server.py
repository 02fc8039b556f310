"""An inference server as the twin runs it: what a vLLM or SGLang container was started with.

``gpuplane.k8s.manifests.inference_args`` recognises the server from a container's image, command
and args (``vllm serve MODEL``, ``python -m vllm.entrypoints.openai.api_server --model ...``,
``python -m sglang.launch_server --model-path ...``) and fills this value; the twin then runs an
engine for every pod of the Deployment.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class InferenceServerSpec:
    kind: str  # vllm | sglang
    model: str  # a catalog name, a Hugging Face id or a config.json path
    served_model_name: str
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float | None = None  # None: the engine's default (0.9 / SGLang's)
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    max_model_len: int | None = None
    enable_prefix_caching: bool = True  # vLLM V1 default on; SGLang radix cache on
    kv_cache_dtype: str = "auto"
    dtype: str = "auto"
    # Prefill/decode disaggregation role (label llm-d.ai/role or gpuplane.io/serving-role).
    role: str = "both"  # both | prefill | decode
    container: str = ""
    image: str = ""
