"""GPU memory pressure when a container starts on a shared GPU or a MIG instance.

The decision is ``gpuplane.slicing.sharing.oom``; this module gathers its input from the twin:
the running pods on the same physical GPU and their ``gpuplane.io/gpu-memory`` demand. Whole,
unshared GPUs are never checked (one pod per GPU; a pod that does not fit its own GPU is the
application's problem, not the cluster's).
"""

from __future__ import annotations

from gpuplane.api.pod_phase import PodPhase
from gpuplane.api.strategies import SharingStrategy
from gpuplane.slicing.devices import DeviceKind
from gpuplane.slicing.sharing.oom import OomVerdict, mig_oom, shared_gpu_oom
from gpuplane.topology.catalog import get_gpu_model
from gpuplane.twin.cluster.objects import Node, Pod
from gpuplane.twin.cluster.store import ObjectStore


def _slots(node: Node, pod: Pod) -> list[tuple[int, DeviceKind, int]]:
    """(physical GPU, kind, device memory) of each device the pod holds."""
    out = [
        (node.device_slots[d].gpu, node.device_slots[d].kind, node.device_slots[d].memory_bytes)
        for d in pod.gpu_ids
    ]
    for name, ids in pod.ext_device_ids.items():
        out.extend(
            (
                node.ext_slots[name][d].gpu,
                node.ext_slots[name][d].kind,
                node.ext_slots[name][d].memory_bytes,
            )
            for d in ids
        )
    return out


def gpu_memory_bytes(node: Node, gpu: int) -> int:
    model = get_gpu_model(str(node.topology.gpus[gpu].model))
    return model.memory_mib * 1024 * 1024


def check_start(store: ObjectStore, node: Node, pod: Pod) -> OomVerdict:
    """Who fails with CUDA out-of-memory as ``pod``'s container starts (possibly nobody)."""
    demand = pod.template.gpu_memory_bytes
    if not demand:
        return OomVerdict(())
    for gpu, kind, memory in _slots(node, pod):
        if kind is DeviceKind.MIG:
            verdict = mig_oom(memory, {pod.uid: demand})
        elif kind is DeviceKind.REPLICA and node.sharing is not None:
            residents = {pod.uid: demand}
            for other in _running_on(store, node, gpu):
                if other.uid != pod.uid and other.template.gpu_memory_bytes:
                    residents[other.uid] = other.template.gpu_memory_bytes
            replicas = sum(1 for s in node.device_slots if s.gpu == gpu) or sum(
                1 for sl in node.ext_slots.values() for s in sl if s.gpu == gpu
            )
            verdict = shared_gpu_oom(
                node.sharing.strategy if node.sharing else SharingStrategy.TIME_SLICING,
                gpu_memory_bytes(node, gpu),
                replicas,
                residents,
            )
        else:
            continue
        if verdict.victims:
            return verdict
    return OomVerdict(())


def _running_on(store: ObjectStore, node: Node, gpu: int) -> list[Pod]:
    out = []
    for uid in node.pods:
        p = store.pods[uid]
        if p.phase is PodPhase.RUNNING and any(g == gpu for g, _, _ in _slots(node, p)):
            out.append(p)
    return out
