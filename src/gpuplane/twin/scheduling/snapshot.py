"""The twin's objects as the scheduler reads them: pods as ``PodInfo``/``BoundPod``, PodGroups
with their member counts, and the whole cluster as a columnar ``ClusterSnapshot``.

Kept incrementally from pod changes (the bound-pod index, the bound pods grouped by labels that
PodTopologySpread and InterPodAffinity count, and the PodGroup counts), so building a snapshot
costs a few array copies; node labels, taints and cordoning are rebuilt only when the
cluster's generation changes. A node that is NotReady or lost carries the
``node.kubernetes.io/not-ready:NoSchedule`` taint in the snapshot, as the node lifecycle
controller adds it (TaintNodesByCondition).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from gpuplane.api.resources import CPU, MEMORY, NVIDIA_GPU, PODS
from gpuplane.api.taints import Taint
from gpuplane.scheduler.framework.pod_index import PodLabelIndex
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot, make_snapshot
from gpuplane.scheduler.framework.types import (
    BASE_RESOURCES,
    BoundPod,
    ContainerInfo,
    GpuShare,
    NominatedPod,
    PodGroupInfo,
    PodInfo,
    WaitingPod,
)
from gpuplane.slicing.dra.snapshot import DraSnapshot
from gpuplane.topology.model import NodeTopology
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.node_taints import NOT_READY_TAINT
from gpuplane.twin.cluster.objects import Node, Pod
from gpuplane.twin.scheduling.nrt_view import NrtView
from gpuplane.twin.scheduling.spread_selector import default_selector

_NO_POD = int(np.iinfo(np.int64).max)
_BASE = frozenset(BASE_RESOURCES)
_Static = tuple[
    tuple[str, ...], tuple[Mapping[str, str], ...], tuple[tuple[Taint, ...], ...], np.ndarray
]


class SnapshotBuilder:
    """Owner of the scheduler-facing indexes of the twin's pods (mutable)."""

    def __init__(self, cluster: Cluster) -> None:
        self.c = cluster
        self.bound: dict[str, BoundPod] = {}
        # ``bound`` grouped by labels (kept in step with it).
        self.pod_index = PodLabelIndex()
        # Per node: priorities of its bound pods, and the lowest of them (preemption's screen).
        self._priorities: dict[str, dict[str, int]] = {}
        self._lowest = np.zeros(0, dtype=np.int64)
        # PodGroup key -> [member pods alive and not terminal, those with a node]
        self._groups: dict[str, list[int]] = {}
        self._counted: dict[str, tuple[str, bool, bool]] = {}
        self._static: tuple[int, int, _Static] | None = None
        self.nrt = NrtView(cluster.store)
        self._hardware: dict[str, NodeTopology] = {}
        self._hardware_key: tuple[int, int] = (-1, -1)

    # ----- pods -----
    def pod_info(self, pod: Pod) -> PodInfo:
        t = pod.template
        group = self.c.store.pod_groups.get(f"{pod.namespace}/{pod.pod_group}")
        return PodInfo(
            uid=pod.uid,
            namespace=pod.namespace,
            name=pod.name,
            requests=pod.requests,
            priority=t.priority,
            created_s=pod.created_s,
            node_selector=t.node_selector,
            tolerations=t.tolerations,
            affinity=t.affinity,
            pod_group=pod.pod_group,
            scheduler_name=t.scheduler_name,
            nominated_node=pod.nominated_node_name,
            group_created_s=group.created_s if group is not None else None,
            qos=pod.qos,
            containers=_containers(pod),
            labels=t.labels,
            topology_spread_constraints=t.topology_spread_constraints,
            default_spread_selector=default_selector(self.c.store, pod),
        )

    def _bound_pod(self, pod: Pod) -> BoundPod:
        assert pod.node_name is not None
        share = self.c.store.share_of.get(pod.uid)
        start = pod.started_s if pod.started_s is not None else pod.scheduled_s
        return BoundPod(
            uid=pod.uid,
            namespace=pod.namespace,
            name=pod.name,
            node=pod.node_name,
            priority=pod.template.priority,
            requests=pod.requests,
            start_s=start if start is not None else self.c.now,
            gpu_ids=pod.gpu_ids,
            gpu_share=GpuShare(*share) if share is not None else None,
            pod_group=pod.pod_group,
            labels=pod.template.labels,
            affinity=pod.template.affinity,
        )

    def on_pod(self, pod: Pod) -> None:
        if pod.holds_resources:
            fresh = self._bound_pod(pod)
            if pod.uid not in self.bound:
                self._priorities.setdefault(fresh.node, {})[pod.uid] = fresh.priority
                self._set_lowest(fresh.node)
                self.pod_index.add(fresh, fresh.node, terminating=fresh.terminating)
            self.bound[pod.uid] = fresh
        else:
            old = self.bound.pop(pod.uid, None)
            if old is not None:
                del self._priorities[old.node][pod.uid]
                self._set_lowest(old.node)
                self.pod_index.remove(pod.uid)
        if pod.pod_group is not None:
            self._count(pod)

    def _set_lowest(self, node: str) -> None:
        store = self.c.store
        if self._lowest.size != len(store.node_order):
            self._lowest = np.full(len(store.node_order), _NO_POD, dtype=np.int64)
            for name, prios in self._priorities.items():
                self._lowest[store.index_of(name)] = min(prios.values(), default=_NO_POD)
            return
        prios = self._priorities.get(node, {})
        self._lowest[store.index_of(node)] = min(prios.values(), default=_NO_POD)

    def lowest_priority(self) -> np.ndarray:
        if self._lowest.size != len(self.c.store.node_order):
            self._set_lowest(self.c.store.node_order[0])
        return self._lowest.copy()

    def _count(self, pod: Pod) -> None:
        """Coscheduling's counts: members that exist and are not terminal, and those bound."""
        key = f"{pod.namespace}/{pod.pod_group}"
        old = self._counted.get(pod.uid)
        live, assigned = pod.is_active, pod.is_active and pod.node_name is not None
        counts = self._groups.setdefault(key, [0, 0])
        if old is not None:
            counts[0] -= old[1]
            counts[1] -= old[2]
        counts[0] += live
        counts[1] += assigned
        self._counted[pod.uid] = (key, live, assigned)

    def pod_groups(self) -> dict[str, PodGroupInfo]:
        out: dict[str, PodGroupInfo] = {}
        for key, g in self.c.store.pod_groups.items():
            live, assigned = self._groups.get(key, (0, 0))
            out[key] = PodGroupInfo(
                key, g.min_member, g.schedule_timeout_s, g.created_s, live, assigned
            )
        return out

    # ----- nodes -----
    def _static_columns(self) -> _Static:
        store = self.c.store
        n = len(store.node_order)
        if self._static is None or self._static[:2] != (self.c.generation, n):
            nodes = [store.nodes[name] for name in store.node_order]
            columns: _Static = (
                tuple(store.node_order),
                tuple(dict(node.labels) for node in nodes),
                tuple(scheduler_taints(node) for node in nodes),
                np.array([node.unschedulable for node in nodes], dtype=bool),
            )
            self._static = (self.c.generation, n, columns)
        return self._static[2]

    def _extra_rows(
        self, pending: Sequence[PodInfo]
    ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Resources outside the arrays the store keeps, read per node (only when asked for)."""
        names: set[str] = set()
        for p in pending:
            if not p.requests.keys() <= _BASE:
                names.update(p.requests.keys() - _BASE)
        alloc: dict[str, np.ndarray] = {}
        used: dict[str, np.ndarray] = {}
        if not names:
            return alloc, used
        nodes = [self.c.store.nodes[name] for name in self.c.store.node_order]
        for r in sorted(names):
            alloc[r] = np.array([n.allocatable.get(r, 0) for n in nodes], dtype=np.int64)
            used[r] = np.array([n.requested.get(r, 0) for n in nodes], dtype=np.int64)
        return alloc, used

    def build(
        self,
        pending: Sequence[PodInfo],
        *,
        waiting: Sequence[WaitingPod],
        nominated: Sequence[NominatedPod],
        next_start_index: int,
    ) -> ClusterSnapshot:
        store = self.c.store
        names, labels, taints, cordoned = self._static_columns()
        alloc, used = self._extra_rows(pending)
        alloc.update({k: store.alloc[k] for k in (CPU, MEMORY, PODS)})
        alloc[NVIDIA_GPU] = store.alloc_gpu
        used.update({k: store.alloc[k] - store.free[k] for k in (CPU, MEMORY, PODS)})
        has_groups = bool(store.pod_groups) and (
            bool(waiting) or any(p.pod_group is not None for p in pending)
        )
        return make_snapshot(
            names,
            allocatable=alloc,
            requested=used,
            gpu_free_milli=store.gpu_free_milli.copy(),
            node_labels=labels,
            node_taints=taints,
            unschedulable=cordoned,
            bound_pods=self.bound,
            pod_index=self.pod_index,
            lowest_priority=self.lowest_priority() if store.node_order else None,
            pod_groups=self.pod_groups() if has_groups else {},
            waiting=waiting,
            nominated=nominated,
            now_s=self.c.now,
            next_start_index=next_start_index,
            generation=self.c.generation,
            nrt=self.nrt,
            hardware=self._hardware_map(),
            dra=self._dra(pending),
        )

    def _dra(self, pending: Sequence[PodInfo]) -> DraSnapshot | None:
        dra = self.c.dra
        if dra is None:
            return None
        store = self.c.store
        nodes = [store.nodes[n] for n in store.node_order]
        pods = [store.pods[p.uid] for p in pending if p.uid in store.pods]
        return dra.snapshot(nodes, pods)

    def _hardware_map(self) -> dict[str, NodeTopology]:
        store = self.c.store
        key = (len(store.node_order), self.c.generation)
        if self._hardware_key != key:
            self._hardware_key = key
            # Only nodes whose devices are whole GPUs: GPU-topology scoring picks GPU indices.
            self._hardware = {
                n: store.nodes[n].topology
                for n in store.node_order
                if store.nodes[n].devices_are_gpus
            }
        return self._hardware


def _containers(pod: Pod) -> tuple[ContainerInfo, ...]:
    t = pod.template
    return (
        *(ContainerInfo(c.name, c.requests, init=True, image=c.image) for c in t.init_containers),
        *(ContainerInfo(c.name, c.requests, image=c.image) for c in t.containers),
    )


def scheduler_taints(node: Node) -> tuple[Taint, ...]:
    """The node's taints as the API shows them: a NotReady or lost node also carries
    ``node.kubernetes.io/not-ready:NoSchedule`` (TaintNodesByCondition)."""
    if node.ready and not node.lost:
        return tuple(node.taints)
    return (NOT_READY_TAINT, *node.taints)
