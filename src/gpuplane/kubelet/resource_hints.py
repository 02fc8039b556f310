"""The hint rule every kubelet hint provider shares, over counts or amounts per NUMA node.

Device, CPU and memory managers all generate hints the same way: for each NUMA mask (by size,
then lexicographically) keep it if what is *free* on its nodes covers the request, and mark
preferred the masks as narrow as the narrowest mask whose *total* capacity could hold the
request on an idle machine (devicemanager/topology_hints.go, cpumanager/policy_static.go
generateCPUTopologyHints, memorymanager/policy_static.go).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpuplane.kubelet.topology_manager.bitmask import iterate_bitmasks
from gpuplane.kubelet.topology_manager.hints import TopologyHint


def amount_hints(
    numa_nodes: Sequence[int],
    free: Mapping[int, int],
    capacity: Mapping[int, int],
    request: int,
) -> list[TopologyHint]:
    """Hints for ``request`` units given free and total units per NUMA node."""
    min_affinity = len(numa_nodes)
    kept = []
    for mask in iterate_bitmasks(list(numa_nodes)):
        nodes = mask.nodes()
        if sum(capacity.get(n, 0) for n in nodes) >= request:
            min_affinity = min(min_affinity, mask.count())
        if sum(free.get(n, 0) for n in nodes) >= request:
            kept.append(mask)
    return [TopologyHint(m, m.count() == min_affinity) for m in kept]
