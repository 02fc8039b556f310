"""gpuplane's scheduler plugins, one per file, or one folder for a plugin of several files (as
kube-scheduler lays out framework/plugins: ``interpodaffinity/``, ``podtopologyspread/``,
``noderesources/``, and scheduler-plugins' ``noderesourcetopology/``);
``registry.in_tree_registry()`` names them all. ``topology_domains`` is the domain counting both
InterPodAffinity and PodTopologySpread use.

kube-scheduler in-tree: PrioritySort, NodeUnschedulable, TaintToleration, NodeAffinity,
NodeResourcesFit, NodeResourcesBalancedAllocation, InterPodAffinity, PodTopologySpread,
ImageLocality, DefaultPreemption, DefaultBinder, DynamicResources (DRA claims, structured
parameters). scheduler-plugins: Coscheduling, NodeResourceTopologyMatch. gpuplane's own:
GPUSharing (fractional GPUs on a concrete device), Fragmentation (FGD's score and gpuplane's
own, over the demand distribution), GPUTopology (the interconnect a multi-GPU pod would get).
"""

from gpuplane.scheduler.plugins import (
    coscheduling,
    default_binder,
    default_preemption,
    dynamic_resources,
    fragmentation,
    gpu_sharing,
    gpu_topology,
    image_locality,
    interpodaffinity,
    node_affinity,
    node_unschedulable,
    noderesources,
    noderesourcetopology,
    podtopologyspread,
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
    "image_locality",
    "interpodaffinity",
    "node_affinity",
    "node_unschedulable",
    "noderesources",
    "noderesourcetopology",
    "podtopologyspread",
    "priority_sort",
    "taint_toleration",
]
