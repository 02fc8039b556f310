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

from collections.abc import Iterator, Mapping

from gpuplane.topology.nrt import ResourceTopology, node_resource_topology
from gpuplane.twin.cluster.objects import Node
from gpuplane.twin.cluster.store import ObjectStore

_Key = tuple[tuple[bool, ...], tuple[bool, ...], tuple[int, ...]]


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
        )

    def _build(self, node: Node) -> ResourceTopology:
        shares = self.store.gpu_shares[node.name]
        replicas = 1
        if node.devices_are_gpus:
            held_gpus = [
                g
                for g in range(node.num_gpus)
                if node.gpu_owner[g] is not None
                or shares[g]
                or not node.gpu_healthy[g]
                or not node.gpus_advertised
            ]
        else:
            # Replicas / MIG devices: a GPU counts as held once none of its devices is free
            # (the zone then under-reports partly used GPUs' remaining devices).
            free = {node.device_slots[d].gpu for d in self.store.free_whole_gpus(node)}
            held_gpus = [g for g in range(node.num_gpus) if g not in free]
            per_gpu = [
                sum(1 for s in node.device_slots if s.gpu == g) for g in range(node.num_gpus)
            ]
            replicas = max(1, min((n for n in per_gpu if n), default=1))
        cfg = node.kubelet
        return node_resource_topology(
            node.topology,
            node_name=node.name,
            policy=cfg.topology_manager_policy.value,
            scope=cfg.topology_manager_scope.value,
            reserved_cpus=cfg.reserved_cpus,
            allocated_cpus=[c for cpus in node.exclusive_cpus.values() for c in cpus],
            allocated_gpus=held_gpus,
            gpu_replicas=replicas,
        )
