"""gpuplane's scheduler plugins, one per file; ``registry.in_tree_registry()`` names them all.

kube-scheduler in-tree: PrioritySort, NodeUnschedulable, TaintToleration, NodeAffinity,
NodeResourcesFit, DefaultPreemption, DefaultBinder. scheduler-plugins: Coscheduling. gpuplane's
own: GPUSharing (fractional GPUs on a concrete device), Fragmentation (FGD's score and
gpuplane's own, over the demand distribution). scheduler-plugins: NodeResourceTopologyMatch.
gpuplane's own: GPUTopology (the interconnect a multi-GPU pod would get). In-tree:
DynamicResources (DRA claims, structured parameters).
"""

from gpuplane.scheduler.plugins import (
    coscheduling,
    default_binder,
    default_preemption,
    dynamic_resources,
    fragmentation,
    gpu_sharing,
    gpu_topology,
    node_affinity,
    node_resource_topology,
    node_resources_fit,
    node_unschedulable,
    priority_sort,
    taint_toleration,
)

__all__ = [
    "coscheduling",
    "default_binder",
    "default_preemption",
    "dynamic_resources",
    "fragmentation",
    "gpu_sharing",
    "gpu_topology",
    "node_affinity",
    "node_resource_topology",
    "node_resources_fit",
    "node_unschedulable",
    "priority_sort",
    "taint_toleration",
]
