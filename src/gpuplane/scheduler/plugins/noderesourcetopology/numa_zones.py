"""NUMA zones as the NodeResourceTopologyMatch plugin reads them, and its fit rules.

kubernetes-sigs/scheduler-plugins ``pkg/noderesourcetopology`` (filter.go, score.go,
least_numa.go, read through the code index at 045a43d): a zone's resources are its
NodeResourceTopology ``available`` amounts. Quantities here are integers: cpu in millicores,
memory in bytes, devices in units; score strategies use the Quantity ``Value()`` of each, which
for cpu is whole cores rounded up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpuplane.api.qos import QosClass
from gpuplane.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from gpuplane.topology.nrt import ResourceTopology

HIGHEST_NUMA_ID = 8  # Topology Manager's limit; also the LeastNUMANodes score unit (100 / 8)
MAX_DISTANCE = 255  # ACPI SLIT: unknown distance
NATIVE = frozenset({CPU, MEMORY, EPHEMERAL_STORAGE, PODS})
IGNORED = frozenset({"pods"})


def is_native(resource: str) -> bool:
    """kube's IsNativeResource: no domain, or a kubernetes.io domain."""
    return resource in NATIVE or "/" not in resource or "kubernetes.io/" in resource


def is_hugepages(resource: str) -> bool:
    return resource.startswith("hugepages-")


@dataclass(slots=True)
class NumaZone:
    numa: int
    resources: dict[str, int]
    costs: dict[int, int] = field(default_factory=dict)


def zones_of(nrt: ResourceTopology) -> list[NumaZone]:
    """createNUMANodeList: one entry per NUMA zone, with the zone's available amounts."""
    out: list[NumaZone] = []
    for z in nrt.zones:
        amounts = {
            r.name: r.available * 1000 if r.name == CPU else r.available for r in z.resources
        }
        costs = {int(c.name.removeprefix("node-")): c.value for c in z.costs}
        out.append(NumaZone(int(z.numa), amounts, costs))
    return out


def suitable(qos: str, resource: str, quantity: int, zone_amount: int) -> bool:
    """isResourceSetSuitable: outside Guaranteed, cpu, memory and hugepages never constrain."""
    if qos != QosClass.GUARANTEED and (resource in (CPU, MEMORY) or is_hugepages(resource)):
        return True
    return zone_amount >= quantity


def fit_numa(
    zones: list[NumaZone],
    requests: Mapping[str, int],
    qos: str,
    node_resources: Mapping[str, int],
) -> int | None:
    """resourcesAvailableInAnyNUMANodes: the lowest NUMA id on which every request fits (what
    the kubelet's single-numa-node policy would pick), or None."""
    allowed = {z.numa for z in zones}
    for resource, quantity in requests.items():
        if quantity == 0 or resource in IGNORED:
            continue
        if node_resources.get(resource, 0) <= 0:
            return None  # not offered by the node at all
        has_affinity = False
        fits: set[int] = set()
        for z in zones:
            if resource not in z.resources:
                continue
            has_affinity = True
            if suitable(qos, resource, quantity, z.resources[resource]):
                fits.add(z.numa)
        if not has_affinity and (not is_native(resource) or resource == "ephemeral-storage"):
            continue  # available at node level without NUMA affinity
        allowed &= fits
        if not allowed:
            return None
    return min(allowed) if allowed else None


def subtract(zones: list[NumaZone], numa: int, requests: Mapping[str, int]) -> None:
    """subtractFromNUMA: take a container's requests off the zone it was aligned to."""
    for z in zones:
        if z.numa == numa:
            for resource, quantity in requests.items():
                if resource in z.resources:
                    z.resources[resource] -= quantity


def value(resource: str, amount: int) -> int:
    """Quantity.Value(): cpu millicores round up to whole cores."""
    return -(-amount // 1000) if resource == CPU else amount


def least_allocated(requested: Mapping[str, int], zone: Mapping[str, int], w: Weights) -> int:
    total = weights = 0
    for r, q in requested.items():
        cap, req = value(r, zone.get(r, 0)), value(r, q)
        score = 0 if cap == 0 or req > cap else (cap - req) * 100 // cap
        total += score * w.of(r)
        weights += w.of(r)
    return total // weights if weights else 0


def most_allocated(requested: Mapping[str, int], zone: Mapping[str, int], w: Weights) -> int:
    total = weights = 0
    for r, q in requested.items():
        cap, req = value(r, zone.get(r, 0)), value(r, q)
        score = 0 if cap == 0 or req > cap else req * 100 // cap
        total += score * w.of(r)
        weights += w.of(r)
    return total // weights if weights else 0


def balanced_allocation(requested: Mapping[str, int], zone: Mapping[str, int], w: Weights) -> int:
    fractions: list[float] = []
    for r, q in requested.items():
        cap = value(r, zone.get(r, 0))
        fraction = 1.0 if cap == 0 else value(r, q) / cap
        if fraction > 1:
            return 0
        fractions.append(fraction)
    if len(fractions) < 2:
        return 100  # the sample variance of one value is undefined; gpuplane reads it as 0
    mean = sum(fractions) / len(fractions)
    variance = sum((f - mean) ** 2 for f in fractions) / (len(fractions) - 1)
    return int((1 - variance) * 100)


@dataclass(frozen=True, slots=True)
class Weights:
    by_resource: Mapping[str, int] = field(default_factory=dict)

    def of(self, resource: str) -> int:
        w = self.by_resource.get(resource, 1)
        return w if w >= 1 else 1


def min_zone_score(
    requested: Mapping[str, int], zones: list[NumaZone], strategy: str, w: Weights
) -> int:
    """scoreForEachNUMANode, quirk included: the running minimum is replaced while it is 0."""
    fn = {
        "LeastAllocated": least_allocated,
        "MostAllocated": most_allocated,
        "BalancedAllocation": balanced_allocation,
    }[strategy]
    best = 0
    for z in zones:
        s = fn(requested, z.resources, w)
        if best == 0 or (s != 0 and s < best):
            best = s
    return best
