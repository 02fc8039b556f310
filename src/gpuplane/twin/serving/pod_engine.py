"""The engine of an inference pod the twin runs: the GPUs the kubelet gave it, their interconnect,
then ``serving.engine_build.engine_for_gpu``. A TP group split over NVLink islands gets the
slower link, as it does on the node; an engine that would not start (fewer GPUs than
``--tensor-parallel-size``) raises with vLLM's own reason.
"""

from __future__ import annotations

from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.core.errors import InputError
from gpuplane.serving.engine.startup import tp_startup_error
from gpuplane.serving.engine_build import BuiltEngine, engine_for_gpu
from gpuplane.serving.inference_server import InferenceServerSpec
from gpuplane.serving.models.catalog import resolve_model
from gpuplane.serving.steptime.interconnect import Interconnect
from gpuplane.topology.catalog import get_gpu_model
from gpuplane.twin.cluster.objects import Node, Pod


def build_engine(pod: Pod, node: Node, spec: InferenceServerSpec) -> BuiltEngine:
    tp = spec.tensor_parallel_size
    gpus = [node.device_slots[d].gpu for d in pod.gpu_ids]
    refused = tp_startup_error(resolve_model(spec.model), tp, len(gpus))
    if refused is not None:
        raise InputError(refused, expected=f"--tensor-parallel-size matching {NVIDIA_GPU}")
    gpu = get_gpu_model(str(node.topology.gpus[gpus[0]].model))
    whole = node.devices_are_gpus and len(set(gpus)) == len(gpus)
    link = (
        Interconnect.from_topology(node.topology, gpus[:tp])
        if whole and tp > 1
        else Interconnect.default_for(gpu.name, tp)
    )
    return engine_for_gpu(spec, gpu, link, pod.name)
