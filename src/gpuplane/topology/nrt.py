"""NodeResourceTopology content: one zone per NUMA node with its costs and resources.

This is what the NFD topology-updater publishes and the scheduler's NodeResourceTopologyMatch
plugin reads; ``gpuplane.k8s.manifests.nrt`` renders it as the ``topology.node.k8s.io/v1alpha2``
kind. Behaviour follows kubernetes-sigs/node-feature-discovery as read through the code index:
``pkg/resourcemonitor/noderesourcesaggregator.go`` @ 7c054c53, ``pkg/nfd-topology-updater/
nfd-topology-updater.go`` and the zone list of jaypipes/ghw ``pkg/topology/topology_linux.go``
@ e47d613f. Descriptions, not copies.

- Zones: every ``/sys/devices/system/node/node<N>`` directory (ghw lists them all), so CPU-less
  NUMA nodes, such as the GPU-memory nodes of a GH200, are zones too. Name ``node-<N>``, type
  ``Node`` (noderesourcetopology-api v1alpha2 ``helper.ZoneTypeNUMANode``).
- Costs: the zone's row of the kernel NUMA distance table, to every zone including itself. NFD
  reads ``node<N>/distance``, has no default of its own, and drops the costs if the file cannot
  be read. Without a distance matrix gpuplane uses what the kernel itself writes there when the
  firmware has no SLIT: 10 local, 20 remote (LOCAL_DISTANCE / REMOTE_DISTANCE, linux
  include/linux/topology.h).
- Resources: a resource appears in a zone only where the kubelet reports something allocatable
  there (podresources GetAllocatableResources). ``cpu``: allocatable = the zone's CPUs minus the
  kubelet's reserved CPUs, capacity = allocatable + reserved; ``memory``: capacity = MemTotal of
  the node, allocatable = capacity minus the kubelet's reserved memory for that NUMA node (the
  kubelet reports memory per NUMA node only with ``memoryManagerPolicy: Static``); devices such
  as ``nvidia.com/gpu``: capacity = allocatable = devices whose NUMA node is the zone. A zone
  with nothing allocatable gets a ``cpu`` entry with capacity = its reserved CPUs and 0
  allocatable. ``available`` = allocatable minus what running pods hold exclusively.
- GPUs count in the zone of their PCI NUMA node (``Gpu.numa``), which is what the NVIDIA device
  plugin reports; a GPU without one carries no topology and appears in no zone.

NFD emits zones and resources in Go map order; here zones are sorted by NUMA id and resources by
name, so equal inputs give equal output.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from gpuplane.api.resources import CPU, MEMORY, NVIDIA_GPU
from gpuplane.core.errors import InputError
from gpuplane.core.ids import NumaId
from gpuplane.topology.model import NodeTopology, NumaNode

ZONE_TYPE_NUMA = "Node"
LOCAL_DISTANCE = 10
REMOTE_DISTANCE = 20


class TopologyManagerPolicy(StrEnum):
    NONE = "none"
    BEST_EFFORT = "best-effort"
    RESTRICTED = "restricted"
    SINGLE_NUMA_NODE = "single-numa-node"


class TopologyManagerScope(StrEnum):
    CONTAINER = "container"
    POD = "pod"


@dataclass(frozen=True, slots=True)
class ZoneResource:
    """Integer amounts: CPUs, bytes of memory, devices."""

    name: str
    capacity: int
    allocatable: int
    available: int


@dataclass(frozen=True, slots=True)
class ZoneCost:
    name: str
    value: int


@dataclass(frozen=True, slots=True)
class Zone:
    name: str
    numa: NumaId
    costs: tuple[ZoneCost, ...]
    resources: tuple[ZoneResource, ...]
    type: str = ZONE_TYPE_NUMA

    def resource(self, name: str) -> ZoneResource | None:
        return next((r for r in self.resources if r.name == name), None)


@dataclass(frozen=True, slots=True)
class ResourceTopology:
    """One node's NodeResourceTopology content, independent of the API version."""

    node_name: str
    zones: tuple[Zone, ...]
    policy: TopologyManagerPolicy
    scope: TopologyManagerScope
    notes: tuple[str, ...] = ()

    @property
    def attributes(self) -> tuple[tuple[str, str], ...]:
        """Node attributes as nfd-topology-updater sets them (createTopologyAttributes)."""
        return (
            ("topologyManagerPolicy", self.policy.value),
            ("topologyManagerScope", self.scope.value),
        )

    def zone(self, numa: int) -> Zone:
        for z in self.zones:
            if z.numa == numa:
                return z
        raise KeyError(f"no zone for NUMA node {numa}; zones: {[z.name for z in self.zones]}")


def zone_name(numa: int) -> str:
    """resourcemonitor makeZoneName()."""
    return f"node-{numa}"


E = TypeVar("E", TopologyManagerPolicy, TopologyManagerScope)


def _parse(kind: type[E], value: str, what: str) -> E:
    try:
        return kind(value)
    except ValueError:
        valid = ", ".join(v.value for v in kind)
        raise InputError(f"unknown Topology Manager {what} {value!r}", expected=valid) from None


def _costs(topo: NodeTopology, src: NumaId) -> tuple[ZoneCost, ...]:
    out: list[ZoneCost] = []
    for node in topo.numa_nodes:
        dist = topo.numa_distance(src, node.id)
        if dist is None:
            dist = LOCAL_DISTANCE if node.id == src else REMOTE_DISTANCE
        out.append(ZoneCost(zone_name(node.id), dist))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class ZoneDevice:
    """One device the kubelet lists as allocatable (podresources GetAllocatableResources): its
    resource name (``nvidia.com/gpu``, ``nvidia.com/mig-1g.10gb``, a time-slicing replica...),
    the physical GPU whose NUMA node it reports, and whether a pod holds it or it is unusable."""

    resource: str
    gpu: int
    held: bool = False


@dataclass(frozen=True, slots=True)
class _Held:
    """What the kubelet keeps back and what running pods hold, node-wide."""

    reserved_cpus: frozenset[int]
    reserved_memory_bytes: Mapping[int, int]
    allocated_cpus: frozenset[int]
    allocated_gpus: frozenset[int]
    gpu_resource: str
    gpu_replicas: int
    devices: tuple[ZoneDevice, ...] | None = None


def _device_resources(
    topo: NodeTopology, node: NumaNode, devices: Sequence[ZoneDevice]
) -> list[ZoneResource]:
    """Per resource name, the devices whose GPU sits on this NUMA node."""
    on_node = {g.index for g in topo.gpus if g.numa == node.id}
    counts: dict[str, list[int]] = {}
    for d in devices:
        if d.gpu in on_node:
            total_held = counts.setdefault(d.resource, [0, 0])
            total_held[0] += 1
            total_held[1] += int(d.held)
    return [ZoneResource(name, n, n, n - used) for name, (n, used) in counts.items()]


def _zone_resources(topo: NodeTopology, node: NumaNode, held: _Held) -> tuple[ZoneResource, ...]:
    out: list[ZoneResource] = []
    cpus = frozenset(node.cpus)
    allocatable_cpus = cpus - held.reserved_cpus
    if allocatable_cpus:
        used = len(allocatable_cpus & held.allocated_cpus)
        n = len(allocatable_cpus)
        out.append(ZoneResource(CPU, len(cpus), n, n - used))
    if node.memory_bytes is not None:
        allocatable = max(0, node.memory_bytes - held.reserved_memory_bytes.get(node.id, 0))
        out.append(ZoneResource(MEMORY, node.memory_bytes, allocatable, allocatable))
    gpus = [g.index for g in topo.gpus if g.numa == node.id]
    if held.devices is not None:
        out.extend(_device_resources(topo, node, held.devices))
    elif gpus:
        n = len(gpus) * held.gpu_replicas
        used = sum(1 for g in gpus if g in held.allocated_gpus) * held.gpu_replicas
        out.append(ZoneResource(held.gpu_resource, n, n, n - used))
    if not out:
        # noderesourcesaggregator Aggregate(): a NUMA node with nothing allocatable still
        # exists in the topology, and all its CPUs count as reserved.
        out.append(ZoneResource(CPU, len(cpus), 0, 0))
    return tuple(sorted(out, key=lambda r: r.name))


def _check_ids(
    topo: NodeTopology, reserved_cpus: Collection[int], allocated_gpus: Collection[int]
) -> None:
    known = {c for n in topo.numa_nodes for c in n.cpus}
    stray = sorted(set(reserved_cpus) - known)
    if stray:
        raise InputError(f"reserved CPUs {stray} are not on {topo.name}", expected="CPU ids")
    bad = sorted(set(allocated_gpus) - set(range(topo.num_gpus)))
    if bad:
        raise InputError(
            f"allocated GPUs {bad} are not on {topo.name}",
            expected=f"GPU indices 0..{topo.num_gpus - 1}",
        )


def node_resource_topology(
    topo: NodeTopology,
    *,
    node_name: str | None = None,
    policy: str = "single-numa-node",
    scope: str = "container",
    reserved_cpus: Collection[int] = (),
    reserved_memory_bytes: Mapping[int, int] | None = None,
    allocated_cpus: Collection[int] = (),
    allocated_gpus: Collection[int] = (),
    gpu_resource: str = NVIDIA_GPU,
    gpu_replicas: int = 1,
    devices: Sequence[ZoneDevice] | None = None,
) -> ResourceTopology:
    """The zones NFD's topology-updater would publish for ``topo``.

    ``reserved_cpus`` / ``reserved_memory_bytes`` (by NUMA id) are the kubelet's
    ``reservedSystemCPUs`` / ``reservedMemory``; ``allocated_cpus`` and ``allocated_gpus`` (GPU
    indices) are held exclusively by running pods; ``gpu_replicas`` > 1 models time-slicing,
    where each GPU is advertised that many times with the same NUMA node. ``devices``, when
    given, replaces the GPU arguments: every device the device plugin lists, under its own
    resource name (MIG instances, replicas, renamed shared GPUs); an empty list is a node whose
    GPUs no device plugin lists (NVIDIA's DRA driver publishes ResourceSlices instead, which
    the podresources allocatable list does not carry).
    """
    if gpu_replicas < 1:
        raise InputError(f"gpu_replicas {gpu_replicas}", expected="1 or more")
    _check_ids(topo, reserved_cpus, allocated_gpus)
    held = _Held(
        reserved_cpus=frozenset(reserved_cpus),
        reserved_memory_bytes=dict(reserved_memory_bytes or {}),
        allocated_cpus=frozenset(allocated_cpus),
        allocated_gpus=frozenset(allocated_gpus),
        gpu_resource=gpu_resource,
        gpu_replicas=gpu_replicas,
        devices=tuple(devices) if devices is not None else None,
    )
    if devices is not None:
        _check_ids(topo, (), [d.gpu for d in devices])
    zones = tuple(
        Zone(
            name=zone_name(node.id),
            numa=node.id,
            costs=_costs(topo, node.id),
            resources=_zone_resources(topo, node, held),
        )
        for node in sorted(topo.numa_nodes, key=lambda n: n.id)
    )
    notes = [
        f"GPU{g.index} has no NUMA node, so it carries no topology and is in no zone"
        for g in topo.gpus
        if g.numa is None
    ]
    if topo.numa_distances is None:
        notes.append(
            f"no NUMA distance table: costs are the kernel defaults {LOCAL_DISTANCE} local / "
            f"{REMOTE_DISTANCE} remote"
        )
    return ResourceTopology(
        node_name=node_name or topo.name,
        zones=zones,
        policy=_parse(TopologyManagerPolicy, policy, "policy"),
        scope=_parse(TopologyManagerScope, scope, "scope"),
        notes=tuple(notes),
    )
