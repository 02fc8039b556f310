"""CPU manager, static policy (pkg/kubelet/cm/cpumanager/policy_static.go).

Only containers of Guaranteed pods with an integer CPU request get exclusive CPUs; everything
else runs in the shared pool and gives no hint (None). Hints follow the shared rule over CPUs
per NUMA node (``resource_hints``). Allocation takes whole physical cores when it can (both
hyper-threads), from the NUMA nodes of the merged hint first, lowest ids first; the kubelet's
takeByTopology also prefers whole sockets and dies, which matters only for very large requests.
Reserved CPUs (``--reserved-cpus``) are never handed out.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from gpuplane.api.resources import CPU
from gpuplane.kubelet.resource_hints import amount_hints
from gpuplane.kubelet.topology_manager.bitmask import BitMask
from gpuplane.kubelet.topology_manager.hints import TopologyHint


@dataclass(frozen=True, slots=True)
class CpuTopology:
    """CPU ids per NUMA node and the sibling (hyper-thread) of each CPU."""

    cpus_by_numa: Mapping[int, tuple[int, ...]]
    siblings: Mapping[int, int]
    reserved: frozenset[int] = frozenset()

    def numa_of(self, cpu: int) -> int:
        for numa, cpus in self.cpus_by_numa.items():
            if cpu in cpus:
                return numa
        raise KeyError(cpu)


def exclusive_cpus(guaranteed: bool, cpu_milli: int) -> int:
    """How many exclusive CPUs the static policy gives a container (0: shared pool)."""
    if not guaranteed or cpu_milli <= 0 or cpu_milli % 1000:
        return 0
    return cpu_milli // 1000


def cpu_hints(
    topo: CpuTopology, request: int, assigned: Collection[int], taken: Collection[int]
) -> dict[str, list[TopologyHint] | None]:
    if request == 0:
        return {CPU: None}
    numa_nodes = sorted(topo.cpus_by_numa)
    if assigned:
        if len(assigned) != request:
            return {CPU: []}
        free = {n: sum(1 for c in assigned if topo.numa_of(c) == n) for n in numa_nodes}
    else:
        busy = set(taken) | topo.reserved
        free = {n: sum(1 for c in cpus if c not in busy) for n, cpus in topo.cpus_by_numa.items()}
    capacity = {n: len(c) - len(topo.reserved & set(c)) for n, c in topo.cpus_by_numa.items()}
    if sum(free.values()) < request:
        return {CPU: []}
    return {CPU: amount_hints(numa_nodes, free, capacity, request)}


def allocate_cpus(
    topo: CpuTopology, request: int, taken: Collection[int], affinity: BitMask | None
) -> tuple[int, ...] | None:
    """Exclusive CPUs for ``request``: whole cores first, aligned NUMA nodes first."""
    busy = set(taken) | topo.reserved
    preferred = set(affinity.nodes()) if affinity is not None else set(topo.cpus_by_numa)
    chosen: list[int] = []
    for numa in sorted(topo.cpus_by_numa, key=lambda n: (n not in preferred, n)):
        free = [c for c in topo.cpus_by_numa[numa] if c not in busy]
        cores = sorted(
            {
                tuple(sorted({c, topo.siblings.get(c, c)}))
                for c in free
                if topo.siblings.get(c, c) in free
            }
        )
        for core in cores:  # whole physical cores first: no noisy hyper-thread neighbour
            if len(chosen) + len(core) <= request:
                chosen.extend(core)
        for c in free:
            if len(chosen) < request and c not in chosen:
                chosen.append(c)
        if len(chosen) >= request:
            return tuple(sorted(chosen))
    return None
