"""An engine for an inference server, built from its flags and the GPUs it runs on.

The memory plan is vLLM's (``serving.memory.plan_memory``) for the GPU model with the server's
``--gpu-memory-utilization``, ``--max-num-seqs``, ``--max-num-batched-tokens`` and
``--max-model-len``; step times are the calibrated roofline over the interconnect the caller
names (the twin passes the link between the GPUs the kubelet gave the pod,
``twin.serving.pod_engine``). Weights that do not fit raise with vLLM's own reason. The twin and
the engine emulator both build here, so the emulator serves what the twin simulates.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.engine.settings import EngineConfig
from gpuplane.serving.inference_server import InferenceServerSpec
from gpuplane.serving.memory.budget import MemoryPlan, plan_memory
from gpuplane.serving.memory.settings import VllmMemorySettings
from gpuplane.serving.models.catalog import resolve_model
from gpuplane.serving.steptime.interconnect import Interconnect
from gpuplane.serving.steptime.model import RooflineStepTime
from gpuplane.topology.catalog import GpuModel


@dataclass(frozen=True, slots=True)
class BuiltEngine:
    engine: Engine
    plan: MemoryPlan
    step_model: RooflineStepTime


def engine_for_gpu(
    spec: InferenceServerSpec,
    gpu: GpuModel,
    link: Interconnect | None = None,
    engine_id: str = "engine-0",
    *,
    record_token_times: bool = False,
) -> BuiltEngine:
    """The engine ``spec`` runs on ``spec.tensor_parallel_size`` GPUs of this model, its TP
    all-reduces over ``link`` (None: the GPU model's usual fabric). The engine emulator builds
    its engine here too, so it serves what the twin simulates."""
    tp = spec.tensor_parallel_size
    shape = resolve_model(spec.model)
    settings = VllmMemorySettings(
        **{
            k: v
            for k, v in (
                ("gpu_memory_utilization", spec.gpu_memory_utilization),
                ("max_num_seqs", spec.max_num_seqs),
                ("max_num_batched_tokens", spec.max_num_batched_tokens),
                ("max_model_len", spec.max_model_len),
            )
            if v is not None
        }
    )
    plan = plan_memory(shape, gpu, tp, settings)
    if link is None:
        link = Interconnect.default_for(gpu.name, tp)
    model = RooflineStepTime(shape, gpu, tp, interconnect=link)
    config = EngineConfig(
        kind="sglang" if spec.kind == "sglang" else "vllm",
        model_name=spec.served_model_name,
        num_gpu_blocks=plan.num_gpu_blocks,
        block_size=plan.block_size,
        max_model_len=plan.max_model_len,
        max_num_batched_tokens=plan.max_num_batched_tokens,
        max_num_seqs=plan.max_num_seqs,
        enable_prefix_caching=spec.enable_prefix_caching,
    )
    engine = Engine(
        config, model, engine_id=engine_id, keep_itl=True, record_token_times=record_token_times
    )
    return BuiltEngine(engine, plan, model)
