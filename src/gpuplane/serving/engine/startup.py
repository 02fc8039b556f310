"""Why a vLLM engine refuses to start for its tensor-parallel size, in vLLM's own words.

vLLM (v0.6-v0.8, ``vllm/config.py`` ``ModelConfig.verify_with_parallel_config`` and the
multiprocessing executor's GPU check, read through the code index) exits at start-up when the
model's attention heads do not split evenly over the TP ranks, or when TP asks for more GPUs than
the container sees. The process exits with code 1 and the pod crash-loops; the twin says why in
the pod's events, and the scenario loader warns before the run.
"""

from __future__ import annotations

from gpuplane.serving.models.shape import ModelShape


def tp_startup_error(shape: ModelShape, tp: int, num_gpus: int | None) -> str | None:
    """vLLM's start-up error for ``tp`` ranks on ``num_gpus`` visible GPUs (None: it starts)."""
    if num_gpus is not None and tp > num_gpus:
        return (
            f"World size ({tp}) is larger than the number of available GPUs ({num_gpus}) in "
            "this node"
        )
    if shape.num_attention_heads % tp != 0:
        return (
            f"Total number of attention heads ({shape.num_attention_heads}) must be divisible "
            f"by tensor parallel size ({tp})."
        )
    return None
