"""A node as its pool describes it: labels, taints, allocatable and the devices it advertises.

Nodes are built before the run starts; the GPU Operator (``twin.operator``) then decides when
the GPUs are advertised and which GFD labels appear.
"""

from __future__ import annotations

from gpuplane.api.resources import CPU, MEMORY, NVIDIA_GPU, PODS
from gpuplane.api.strategies import SharingStrategy
from gpuplane.slicing.devices import DeviceSlot, whole_gpus
from gpuplane.slicing.devices import replicas as replica_slots
from gpuplane.slicing.mig.node_devices import MIG_CONFIG_LABEL, MIG_STATE_LABEL, mig_slots
from gpuplane.twin.cluster.objects import Node
from gpuplane.twin.scenario.spec import NodePoolSpec


def default_allocatable(pool: NodePoolSpec) -> dict[str, int]:
    topo = pool.topology
    cpus = sum(len(n.cpus) for n in topo.cpu_numa_nodes())
    memory = sum(n.memory_bytes or 0 for n in topo.numa_nodes)
    out = {CPU: cpus * 1000, MEMORY: memory, PODS: 110}
    out.update(pool.allocatable)
    return out


def make_node(pool: NodePoolSpec, index: int) -> Node:
    name = f"{pool.name}-{index}"
    alloc = default_allocatable(pool)
    num_gpus = pool.topology.num_gpus
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "gpuplane.io/node-pool": pool.name,
        **pool.labels,
    }
    slots, ext = advertised_devices(pool)
    if pool.dra:
        slots, ext = [], {}  # the DRA driver publishes the GPUs; no device plugin
    if pool.mig is not None:
        slots, ext = mig_slots(pool.topology, pool.mig.layouts, pool.mig.strategy)
        labels.update(
            {
                MIG_CONFIG_LABEL: pool.mig.config,
                MIG_STATE_LABEL: "success",
                "nvidia.com/mig.strategy": pool.mig.strategy,
            }
        )
    capacity = {**alloc, NVIDIA_GPU: len(slots), **{k: len(v) for k, v in ext.items()}}
    return Node(
        name=name,
        pool=pool.name,
        topology=pool.topology,
        labels=labels,
        taints=list(pool.taints),
        capacity=capacity,
        allocatable=alloc,
        gpu_healthy=[True] * num_gpus,
        device_slots=slots,
        gpu_owner=[None] * len(slots),
        ext_slots=ext,
        ext_owner={k: [None] * len(v) for k, v in ext.items()},
        sharing=pool.device_plugin,
        mig_layouts=list(pool.mig.layouts) if pool.mig is not None else None,
        mig_strategy=pool.mig.strategy if pool.mig is not None else "",
        kubelet=pool.kubelet,
        dra=pool.dra,
    )


def advertised_devices(pool: NodePoolSpec) -> tuple[list[DeviceSlot], dict[str, list[DeviceSlot]]]:
    """``nvidia.com/gpu`` devices and other device resources the pool's device plugin lists."""
    num_gpus = pool.topology.num_gpus
    cfg = pool.device_plugin
    if cfg is None or cfg.strategy is SharingStrategy.NONE or cfg.replicas_of(NVIDIA_GPU) <= 1:
        return whole_gpus(num_gpus), {}
    slots = replica_slots(num_gpus, cfg.replicas_of(NVIDIA_GPU))
    if cfg.rename_by_default:
        return [], {cfg.advertised_name(NVIDIA_GPU): slots}
    return slots, {}
