"""The in-tree registry: every plugin of this package by name, with its args model (kube-scheduler:
pkg/scheduler/framework/plugins/registry.go, NewInTreeRegistry).

The framework imports no plugin; whoever builds a ``Scheduler`` passes it a registry, this one or
one with plugins of its own added (kube-scheduler's out-of-tree registry merged into the in-tree
one), and a scenario's profiles are validated against this one.
"""

from __future__ import annotations

from pydantic import BaseModel

from gpuplane.scheduler.framework.interfaces import Plugin
from gpuplane.scheduler.framework.registry import Registry
from gpuplane.scheduler.plugins.coscheduling import Coscheduling, CoschedulingArgs
from gpuplane.scheduler.plugins.default_binder import DefaultBinder
from gpuplane.scheduler.plugins.default_preemption import DefaultPreemption, DefaultPreemptionArgs
from gpuplane.scheduler.plugins.dynamic_resources import DynamicResources
from gpuplane.scheduler.plugins.fragmentation import Fragmentation, FragmentationArgs
from gpuplane.scheduler.plugins.gpu_sharing import GPUSharing
from gpuplane.scheduler.plugins.gpu_topology import GPUTopology, GPUTopologyArgs
from gpuplane.scheduler.plugins.image_locality import ImageLocality
from gpuplane.scheduler.plugins.interpodaffinity.plugin import (
    InterPodAffinity,
    InterPodAffinityArgs,
)
from gpuplane.scheduler.plugins.no_op import NO_OP_PLUGINS
from gpuplane.scheduler.plugins.node_affinity import NodeAffinity
from gpuplane.scheduler.plugins.node_unschedulable import NodeUnschedulable
from gpuplane.scheduler.plugins.noderesources.balanced_allocation import (
    NodeResourcesBalancedAllocation,
    NodeResourcesBalancedAllocationArgs,
)
from gpuplane.scheduler.plugins.noderesources.fit import NodeResourcesFit, NodeResourcesFitArgs
from gpuplane.scheduler.plugins.noderesourcetopology.plugin import (
    NodeResourceTopologyMatch,
    NodeResourceTopologyMatchArgs,
)
from gpuplane.scheduler.plugins.podtopologyspread.plugin import (
    PodTopologySpread,
    PodTopologySpreadArgs,
)
from gpuplane.scheduler.plugins.priority_sort import PrioritySort
from gpuplane.scheduler.plugins.taint_toleration import TaintToleration

# (plugin class, args model); the name is the class's own ``name``.
IN_TREE: tuple[tuple[type[Plugin], type[BaseModel] | None], ...] = (
    (PrioritySort, None),
    (NodeUnschedulable, None),
    (TaintToleration, None),
    (NodeAffinity, None),
    (NodeResourcesFit, NodeResourcesFitArgs),
    (PodTopologySpread, PodTopologySpreadArgs),
    (InterPodAffinity, InterPodAffinityArgs),
    (DynamicResources, None),
    (DefaultPreemption, DefaultPreemptionArgs),
    (NodeResourcesBalancedAllocation, NodeResourcesBalancedAllocationArgs),
    (ImageLocality, None),
    (DefaultBinder, None),
    *((cls, None) for cls in NO_OP_PLUGINS),
    (GPUSharing, None),
    (Coscheduling, CoschedulingArgs),
    (Fragmentation, FragmentationArgs),
    (GPUTopology, GPUTopologyArgs),
    (NodeResourceTopologyMatch, NodeResourceTopologyMatchArgs),
)


def in_tree_registry() -> Registry:
    """A new registry holding gpuplane's in-tree plugins (new each time: callers may add)."""
    registry = Registry()
    for cls, args in IN_TREE:
        registry.register(cls.name, args=args)(cls)
    return registry
