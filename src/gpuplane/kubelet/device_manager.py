"""Device manager topology hints (pkg/kubelet/cm/devicemanager/topology_hints.go).

Per requested extended resource (requests == limits):
- no device of the resource reports a NUMA node -> None (no preference);
- devices already allocated to this container: a count different from the request -> [];
  else the hints are regenerated from exactly those devices;
- else available = healthy - allocated (to any container); fewer than requested -> [];
- generate: for every NUMA mask (by size, then lexicographically), keep it if the available
  (+ reusable) devices on its nodes cover the request; ``preferred`` marks the masks as narrow as
  the narrowest mask that could hold the request on an idle machine (counting ALL devices).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from gpuplane.kubelet.topology_manager.bitmask import BitMask, iterate_bitmasks
from gpuplane.kubelet.topology_manager.hints import TopologyHint


@dataclass(frozen=True, slots=True)
class Device:
    id: str
    numa: int | None  # None: the device reports no topology
    healthy: bool = True


def generate_device_hints(
    numa_nodes: Sequence[int],
    devices: Sequence[Device],
    available: Collection[str],
    reusable: Collection[str],
    request: int,
) -> list[TopologyHint]:
    numa_of = {d.id: d.numa for d in devices}
    min_affinity = len(numa_nodes)
    hints: list[tuple[BitMask, int]] = []
    for mask in iterate_bitmasks(list(numa_nodes)):
        nodes = set(mask.nodes())
        on_mask = sum(1 for d in devices if d.numa in nodes)
        if on_mask >= request:
            min_affinity = min(min_affinity, mask.count())
        if any(numa_of.get(r) is not None and numa_of[r] not in nodes for r in reusable):
            continue
        matching = sum(1 for r in reusable if numa_of.get(r) in nodes)
        matching += sum(1 for a in available if numa_of.get(a) in nodes)
        if matching >= request:
            hints.append((mask, mask.count()))
    return [TopologyHint(mask, count == min_affinity) for mask, count in hints]


def device_hints(
    numa_nodes: Sequence[int],
    devices: Mapping[str, Sequence[Device]],
    request: Mapping[str, int],
    allocated_to_container: Mapping[str, Collection[str]],
    allocated_elsewhere: Mapping[str, Collection[str]],
    reusable: Mapping[str, Collection[str]] | None = None,
) -> dict[str, list[TopologyHint] | None]:
    """GetTopologyHints for one container: resource -> hints (None = no preference)."""
    out: dict[str, list[TopologyHint] | None] = {}
    for resource, count in request.items():
        devs = list(devices.get(resource, ()))
        if not any(d.numa is not None for d in devs):
            out[resource] = None
            continue
        mine = set(allocated_to_container.get(resource, ()))
        if mine:
            if len(mine) != count:
                out[resource] = []
            else:
                out[resource] = generate_device_hints(numa_nodes, devs, mine, set(), count)
            continue
        reuse = set((reusable or {}).get(resource, ()))
        taken = set(allocated_elsewhere.get(resource, ()))
        available = {d.id for d in devs if d.healthy} - taken - reuse
        if len(available | reuse) < count:
            out[resource] = []
            continue
        out[resource] = generate_device_hints(numa_nodes, devs, available, reuse, count)
    return out
