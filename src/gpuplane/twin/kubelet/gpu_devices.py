"""Which pods sit on a physical GPU, whatever devices it is advertised as."""

from __future__ import annotations

import re

from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.api.strategies import MigStrategy
from gpuplane.slicing.mig.node_devices import mig_gpu_of
from gpuplane.slicing.mig.strategy import NodeGpu, plugin_view
from gpuplane.slicing.sharing.advertise import sharing_labels
from gpuplane.topology.gfd import gfd_labels
from gpuplane.twin.cluster.objects import Node


def node_gfd_labels(node: Node) -> dict[str, str]:
    """GPU Feature Discovery's labels for the node, sharing labels included."""
    labels = gfd_labels(node.topology, machine=node.topology.machine)
    if node.mig_layouts is not None:
        gpu = mig_gpu_of(node.topology)
        gpus = [NodeGpu(i, gpu, True, layout) for i, layout in enumerate(node.mig_layouts)]
        labels.update(plugin_view(gpus, MigStrategy(node.mig_strategy or "mixed")).labels)
    if node.sharing is not None:
        product = labels.get("nvidia.com/gpu.product", "")
        labels.update(sharing_labels(node.sharing, product, NVIDIA_GPU))
    return labels


def pods_on_gpu(node: Node, gpu: int) -> list[str]:
    """Uids of the pods holding a device of physical GPU ``gpu`` (whole, replica or MIG)."""
    found: list[str] = []
    for d, uid in enumerate(node.gpu_owner):
        if uid is not None and node.device_slots[d].gpu == gpu and uid not in found:
            found.append(uid)
    for name, owners in node.ext_owner.items():
        slots = node.ext_slots[name]
        for d, uid in enumerate(owners):
            if uid is not None and slots[d].gpu == gpu and uid not in found:
                found.append(uid)
    return found


def gpu_fraction(node: Node, gpu_ids: tuple[int, ...], ext: dict[str, tuple[int, ...]]) -> float:
    """How many physical GPUs a pod's devices amount to: 1 per whole GPU, 1/replicas per
    replica, the instance's compute share (g/7) per MIG device."""
    total = 0.0
    for slot in [node.device_slots[d] for d in gpu_ids] + [
        node.ext_slots[n][d] for n, ids in ext.items() for d in ids
    ]:
        if slot.kind.value == "replica":
            per_gpu = sum(1 for s in node.device_slots if s.gpu == slot.gpu) or sum(
                1 for sl in node.ext_slots.values() for s in sl if s.gpu == slot.gpu
            )
            total += 1.0 / max(per_gpu, 1)
        elif slot.kind.value == "mig" and slot.profile:
            total += int(slot.profile.split("g", 1)[0]) / 7.0
        else:
            total += 1.0
    return total


_MIG_NAME = re.compile(r"^gpu-\d+-mig-(\d+)g")


def dra_fraction(devices: tuple[str, ...]) -> float:
    """GPUs behind DRA device names: a whole ``gpu-N`` is 1, a MIG device its g/7."""
    total = 0.0
    for name in devices:
        m = _MIG_NAME.match(name)
        total += int(m.group(1)) / 7.0 if m else 1.0
    return total
