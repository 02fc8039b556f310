"""A ``FitCluster`` as the scheduler framework reads it: one columnar ``ClusterSnapshot``.

Requested resources are the sums of the requests of the pods that hold resources on each node
(bound and not finished, as kube-scheduler's cache counts them); the per-GPU matrix comes from
the assumed holdings (:mod:`gpuplane.fit.holdings`), so plugins that read devices
(gpuplane's GPU topology and NUMA plugins) see the replayed state, while kube's default plugins
read only the counts, which are exact.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from gpuplane.api.resources import NVIDIA_GPU, PODS
from gpuplane.fit.holdings import NodeHolding, ReplayCache, replay_node
from gpuplane.fit.model import FitCluster, FitPod
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot, make_snapshot
from gpuplane.scheduler.framework.types import MILLI_PER_GPU, BoundPod, IntArray
from gpuplane.topology.model import NodeTopology


@dataclass(frozen=True, slots=True)
class FrameworkView:
    snapshot: ClusterSnapshot
    holdings: Mapping[str, NodeHolding]
    pods_by_node: Mapping[str, tuple[FitPod, ...]]
    pods_by_uid: Mapping[str, FitPod]


def _by_node(cluster: FitCluster) -> dict[str, list[FitPod]]:
    out: dict[str, list[FitPod]] = {n.name: [] for n in cluster.nodes}
    for p in cluster.pods:
        if p.holds and p.node in out:
            out[p.node].append(p)
    return out


def _requested(
    names: Sequence[str], resources: Sequence[str], by_node: Mapping[str, list[FitPod]]
) -> dict[str, IntArray]:
    req = {r: np.zeros(len(names), dtype=np.int64) for r in resources}
    for i, name in enumerate(names):
        for p in by_node[name]:
            for r, v in p.info.requests.items():
                if r in req:
                    req[r][i] += v
            req[PODS][i] += 1
    return req


def _gpu_matrix(cluster: FitCluster, holdings: Mapping[str, NodeHolding]) -> IntArray:
    width = max((n.gpus for n in cluster.nodes), default=0)
    matrix = np.full((len(cluster.nodes), width), -1, dtype=np.int64)
    for i, node in enumerate(cluster.nodes):
        matrix[i, : node.gpus] = MILLI_PER_GPU
        for g in holdings[node.name].taken_gpus:
            if g < node.gpus:
                matrix[i, g] = 0
    return matrix


def _bound(cluster: FitCluster, holdings: Mapping[str, NodeHolding]) -> dict[str, BoundPod]:
    out: dict[str, BoundPod] = {}
    for p in cluster.pods:
        if not p.holds or p.node is None or p.node not in holdings:
            continue
        info = p.info
        out[info.uid] = BoundPod(
            uid=info.uid,
            namespace=info.namespace,
            name=info.name,
            node=p.node,
            priority=info.priority,
            requests=info.requests,
            start_s=p.start_s,
            gpu_ids=holdings[p.node].gpus_by_pod.get(info.uid, ()),
            pod_group=info.pod_group,
            labels=info.labels,
            affinity=info.affinity,
        )
    return out


def framework_view(
    cluster: FitCluster,
    reuse: Mapping[str, NodeHolding] | None = None,
    changed: Collection[str] = (),
) -> FrameworkView:
    """The framework's snapshot of ``cluster``; with ``reuse``, the holdings of nodes not in
    ``changed`` are taken from it instead of replayed."""
    names = [n.name for n in cluster.nodes]
    by_node = _by_node(cluster)
    cache: ReplayCache = {}
    holdings = {
        n.name: reuse[n.name]
        if reuse is not None and n.name in reuse and n.name not in changed
        else replay_node(n, by_node[n.name], cache)
        for n in cluster.nodes
    }
    resources = sorted(
        {r for n in cluster.nodes for r in n.allocatable}
        | {r for p in cluster.pods if p.holds for r in p.info.requests}
        | {PODS, NVIDIA_GPU}
    )
    allocatable = {
        r: np.array([n.allocatable.get(r, 0) for n in cluster.nodes], dtype=np.int64)
        for r in resources
    }
    hardware: dict[str, NodeTopology] = {
        n.name: n.hardware.topology for n in cluster.nodes if n.hardware.topology is not None
    }
    snap = make_snapshot(
        names,
        allocatable=allocatable,
        requested=_requested(names, resources, by_node),
        gpu_free_milli=_gpu_matrix(cluster, holdings),
        node_labels=[n.labels for n in cluster.nodes],
        node_taints=[n.taints for n in cluster.nodes],
        unschedulable=np.array([n.unschedulable for n in cluster.nodes], dtype=bool),
        bound_pods=_bound(cluster, holdings),
        pod_groups=cluster.pod_groups,
        now_s=cluster.now_s,
        hardware=hardware,
        dra=cluster.dra,
        namespace_labels=cluster.namespace_labels,
        node_images=[n.images for n in cluster.nodes],
    )
    return FrameworkView(
        snap,
        holdings,
        {k: tuple(v) for k, v in by_node.items()},
        {p.info.uid: p for p in cluster.pods},
    )
