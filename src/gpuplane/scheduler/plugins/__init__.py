"""gpuplane's scheduler plugins, one per file; importing this package registers them all.

kube-scheduler in-tree: PrioritySort, NodeUnschedulable, TaintToleration, NodeAffinity,
NodeResourcesFit, DefaultPreemption, DefaultBinder. scheduler-plugins: Coscheduling. gpuplane's
own: GPUSharing (fractional GPUs on a concrete device), Fragmentation (FGD's score and
gpuplane's own, over the demand distribution).
"""

from gpuplane.scheduler.plugins import (
    coscheduling,
    default_binder,
    default_preemption,
    fragmentation,
    gpu_sharing,
    node_affinity,
    node_resources_fit,
    node_unschedulable,
    priority_sort,
    taint_toleration,
)

__all__ = [
    "coscheduling",
    "default_binder",
    "default_preemption",
    "fragmentation",
    "gpu_sharing",
    "node_affinity",
    "node_resources_fit",
    "node_unschedulable",
    "priority_sort",
    "taint_toleration",
]
