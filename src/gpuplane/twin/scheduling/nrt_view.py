"""The NodeResourceTopology objects of the twin's nodes, as a lazy read-only mapping.

Each node whose kubelet config publishes NRT (NFD's topology-updater running) gets the zones
``gpuplane.topology.nrt`` computes from its hardware, its kubelet's reserved CPUs, the CPUs its
pods hold exclusively and the GPUs that are owned, shared, unhealthy or not advertised. Objects
are built when a scheduler plugin first reads them and rebuilt only when the node's allocations
changed since.

The twin's NRT is always current: the real topology-updater publishes on a timer and on pod
events, and the scheduler plugin's caches (overreserve, discardreserved) exist to cover the gap.
gpuplane's NodeResourceTopologyMatch accounts for the pods it assumed within one scheduling
decision itself.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.topology.nrt import ResourceTopology, ZoneDevice, node_resource_topology
from gpuplane.twin.cluster.objects import Node
from gpuplane.twin.cluster.store import ObjectStore

_Key = tuple[tuple[bool, ...], tuple[bool, ...], tuple[int, ...], tuple[tuple[bool, ...], ...]]


class NrtView(Mapping[str, ResourceTopology]):
    def __init__(self, store: ObjectStore) -> None:
        self.store = store
        self._cache: dict[str, tuple[_Key, ResourceTopology]] = {}

    def _publishing(self) -> list[str]:
        return [n for n in self.store.node_order if self.store.nodes[n].kubelet.publish_nrt]

    def __getitem__(self, name: str) -> ResourceTopology:
        node = self.store.nodes.get(name)
        if node is None or not node.kubelet.publish_nrt:
            raise KeyError(name)
        key = self._key(node)
        hit = self._cache.get(name)
        if hit is not None and hit[0] == key:
            return hit[1]
        nrt = self._build(node)
        self._cache[name] = (key, nrt)
        return nrt

    def __iter__(self) -> Iterator[str]:
        return iter(self._publishing())

    def __len__(self) -> int:
        return len(self._publishing())

    def __contains__(self, name: object) -> bool:
        node = self.store.nodes.get(name) if isinstance(name, str) else None
        return node is not None and node.kubelet.publish_nrt

    def _key(self, node: Node) -> _Key:
        shares = self.store.gpu_shares[node.name]
        return (
            tuple(o is None and not shares[g] for g, o in enumerate(node.gpu_owner)),
            (*node.gpu_healthy, node.gpus_advertised),
            tuple(sorted(c for cpus in node.exclusive_cpus.values() for c in cpus)),
            tuple(tuple(o is None for o in node.ext_owner[n]) for n in sorted(node.ext_owner)),
        )

    def _build(self, node: Node) -> ResourceTopology:
        return node_nrt(node, self.store.gpu_shares[node.name])


def zone_devices(node: Node, shares: Sequence[object] = ()) -> list[ZoneDevice]:
    """Every device the node's device plugin lists, under its resource name, and whether it is
    held: owned by a pod, shared by GPUSharing pods (``shares[g]`` truthy), on an unhealthy
    GPU, or not advertised yet (driver and device plugin not up). ``shares`` is per device.
    DRA nodes list none."""
    if node.dra:
        return []

    def unusable(gpu: int) -> bool:
        return not node.gpu_healthy[gpu] or not node.gpus_advertised

    out = [
        ZoneDevice(
            NVIDIA_GPU,
            slot.gpu,
            node.gpu_owner[d] is not None
            or unusable(slot.gpu)
            or (d < len(shares) and bool(shares[d])),
        )
        for d, slot in enumerate(node.device_slots)
    ]
    for name in sorted(node.ext_slots):
        owners = node.ext_owner[name]
        out.extend(
            ZoneDevice(name, slot.gpu, owners[d] is not None or unusable(slot.gpu))
            for d, slot in enumerate(node.ext_slots[name])
        )
    return out


def node_nrt(node: Node, shares: Sequence[object] = ()) -> ResourceTopology:
    """The NodeResourceTopology NFD's topology-updater publishes for ``node``: its kubelet's
    Topology Manager policy and scope, reserved CPUs, the CPUs its pods hold exclusively and
    every advertised device by resource name (MIG instances, time-slicing replicas)."""
    cfg = node.kubelet
    return node_resource_topology(
        node.topology,
        node_name=node.name,
        policy=cfg.topology_manager_policy.value,
        scope=cfg.topology_manager_scope.value,
        reserved_cpus=cfg.reserved_cpus,
        allocated_cpus=[c for cpus in node.exclusive_cpus.values() for c in cpus],
        devices=zone_devices(node, shares),
    )
