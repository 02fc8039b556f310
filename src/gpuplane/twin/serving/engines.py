"""An engine for an inference pod, built from its server flags and the GPUs it got.

The memory plan is vLLM's (``serving.memory.plan_memory``) for the node's GPU model with the
pod's ``--gpu-memory-utilization``, ``--max-num-seqs``, ``--max-num-batched-tokens`` and
``--max-model-len``; step times are the calibrated roofline over the interconnect of the GPUs
the kubelet actually gave the pod (NVLink, PCIe or across sockets), so a TP group split over
islands is slower in the twin as it is on the node. An engine that would not start (weights
do not fit, fewer GPUs than ``--tensor-parallel-size``) raises with vLLM's own reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.core.errors import InputError
from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.engine.settings import EngineConfig
from gpuplane.serving.engine.startup import tp_startup_error
from gpuplane.serving.memory.budget import MemoryPlan, plan_memory
from gpuplane.serving.memory.settings import VllmMemorySettings
from gpuplane.serving.models.catalog import resolve_model
from gpuplane.serving.steptime.interconnect import Interconnect
from gpuplane.serving.steptime.model import RooflineStepTime
from gpuplane.topology.catalog import GpuModel, get_gpu_model
from gpuplane.twin.cluster.objects import Node, Pod
from gpuplane.twin.scenario.inference import InferenceServerSpec


@dataclass(frozen=True, slots=True)
class BuiltEngine:
    engine: Engine
    plan: MemoryPlan
    step_model: RooflineStepTime


def build_engine(pod: Pod, node: Node, spec: InferenceServerSpec) -> BuiltEngine:
    tp = spec.tensor_parallel_size
    gpus = [node.device_slots[d].gpu for d in pod.gpu_ids]
    refused = tp_startup_error(resolve_model(spec.model), tp, len(gpus))
    if refused is not None:
        raise InputError(refused, expected="--tensor-parallel-size matching nvidia.com/gpu")
    gpu = get_gpu_model(str(node.topology.gpus[gpus[0]].model))
    whole = node.devices_are_gpus and len(set(gpus)) == len(gpus)
    link = (
        Interconnect.from_topology(node.topology, gpus[:tp])
        if whole and tp > 1
        else Interconnect.default_for(gpu.name, tp)
    )
    return engine_for_gpu(spec, gpu, link, pod.name)


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
