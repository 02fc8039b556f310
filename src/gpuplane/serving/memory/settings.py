"""The vLLM engine flags that size its memory, as one validated settings value."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuplane.serving.memory.vllm_defaults import DEFAULT_GPU_MEMORY_UTILIZATION


class VllmMemorySettings(BaseModel):
    """``vllm serve`` flags plus measured figures that replace the estimates (bytes)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    gpu_memory_utilization: float = Field(
        DEFAULT_GPU_MEMORY_UTILIZATION,
        gt=0,
        le=1,
        description="fraction of the GPU's total memory the engine may use",
    )
    max_model_len: int | None = Field(
        None, ge=1, description="longest request (prompt + output); default: from config.json"
    )
    block_size: Literal[1, 8, 16, 32, 64, 128] = Field(
        16, description="tokens per KV-cache block (vLLM's DEFAULT_BLOCK_SIZE on CUDA)"
    )
    kv_cache_dtype: Literal["auto", "fp8", "fp8_e4m3", "fp8_e5m2"] = Field(
        "auto", description="KV element type; auto = the model dtype"
    )
    dtype: Literal["auto", "half", "float16", "bfloat16", "float", "float32"] = Field(
        "auto", description="weights/activation dtype; auto = the checkpoint's"
    )
    max_num_batched_tokens: int | None = Field(
        None, ge=1, description="tokens per step (and in the profiling run); default per GPU"
    )
    max_num_seqs: int | None = Field(None, ge=1, description="requests per step; default per GPU")
    gpu_memory_bytes: int | None = Field(
        None, gt=0, description="total GPU memory as CUDA reports it; default per GPU model"
    )
    weights_bytes: int | None = Field(None, ge=0, description="measured weights per GPU")
    activation_bytes: int | None = Field(None, ge=0, description="measured activation peak")
    non_torch_bytes: int | None = Field(None, ge=0, description="measured non-torch memory")
    other_processes_bytes: int = Field(
        0, ge=0, description="memory already held on the GPU by other processes"
    )
