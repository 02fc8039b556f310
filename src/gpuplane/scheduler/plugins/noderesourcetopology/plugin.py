"""NodeResourceTopologyMatch: keep pods off nodes whose kubelet would refuse them for topology.

As kubernetes-sigs/scheduler-plugins implements it (``pkg/noderesourcetopology``, read through
the code index at 045a43d; behaviour described, not copied):

Filter, only on nodes that publish a NodeResourceTopology with ``topologyManagerPolicy:
single-numa-node`` (other policies and nodes without NRT pass):
- BestEffort pods pass unless they request a non-native resource (such as ``nvidia.com/gpu``).
- container scope: each init container must fit in one NUMA zone ("cannot align init
  container"); each app container must fit in one zone ("cannot align container"), and is
  charged to the lowest-numbered zone that fits, as the kubelet would choose;
- pod scope: the pod's effective request must fit in one zone ("cannot align pod").
- A request fits a zone when the zone's available amount covers it; outside Guaranteed QoS, cpu,
  memory and hugepages always fit. A resource no zone reports is fine if it is non-native (or
  ephemeral-storage) and the node offers it.

Score (Guaranteed pods only; others get 100): ``scoringStrategy.type`` LeastAllocated (the
default), MostAllocated or BalancedAllocation over each zone's available resources, taking the
lowest non-zero zone score (container scope: the mean over containers); LeastNUMANodes prefers
nodes where the pod needs fewer zones. ``scoringStrategy.resources`` gives per-resource weights.

gpuplane difference: within one scheduling decision the plugin charges the pods already assumed
on a node to its zones (the upstream plugin relies on its reserve cache for the same purpose),
so a burst of pods is not all sent to the zone that had room before the first of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from gpuplane.api.qos import QosClass
from gpuplane.api.resources import CPU, MEMORY
from gpuplane.scheduler.framework.explain import ReasonGroup
from gpuplane.scheduler.framework.interfaces import FILTER, SCORE, Handle
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.status import SUCCESS, Code, Status, unschedulable
from gpuplane.scheduler.framework.types import BoolArray, ContainerInfo, IntArray, PodInfo
from gpuplane.scheduler.plugins.noderesourcetopology.least_numa import least_numa_score
from gpuplane.scheduler.plugins.noderesourcetopology.numa_zones import (
    NumaZone,
    Weights,
    fit_numa,
    is_native,
    min_zone_score,
    subtract,
    zones_of,
)
from gpuplane.topology.nrt import ResourceTopology, TopologyManagerPolicy, TopologyManagerScope

INIT_REASON = "cannot align init container"
CONTAINER_REASON = "cannot align container"
POD_REASON = "cannot align pod"


class ResourceWeight(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    weight: int = 1


class ScoringStrategy(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["LeastAllocated", "MostAllocated", "BalancedAllocation", "LeastNUMANodes"] = (
        "LeastAllocated"
    )
    resources: list[ResourceWeight] = Field(default_factory=list)


class NodeResourceTopologyMatchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    scoring_strategy: ScoringStrategy = Field(
        default_factory=ScoringStrategy, alias="scoringStrategy"
    )


def effective_request(pod: PodInfo) -> dict[str, int]:
    """GetPodEffectiveRequest: max(sum of app containers, each init container), per resource."""
    out: dict[str, int] = {}
    for c in pod.container_list():
        if not c.init:
            for r, q in c.requests.items():
                out[r] = out.get(r, 0) + q
    for c in pod.container_list():
        if c.init:
            for r, q in c.requests.items():
                out[r] = max(out.get(r, 0), q)
    return out


def _node_resources(st: ClusterState, i: int) -> dict[str, int]:
    return {r: int(st.alloc[row, i]) for r, row in st.row.items()}


def align(
    pod: PodInfo, nrt: ResourceTopology, zones: list[NumaZone], offered: Mapping[str, int]
) -> str | None:
    """Run the single-numa-node handler, charging ``zones``; the rejection reason or None."""
    if nrt.scope is TopologyManagerScope.POD:
        request = effective_request(pod)
        numa = fit_numa(zones, request, pod.qos, offered)
        if numa is None:
            return POD_REASON
        subtract(zones, numa, request)
        return None
    for c in pod.container_list():
        numa = fit_numa(zones, c.requests, pod.qos, offered)
        if numa is None:
            return INIT_REASON if c.init else CONTAINER_REASON
        if not c.init:
            subtract(zones, numa, c.requests)
    return None


def _exclusive_part(pod: PodInfo) -> PodInfo:
    """What an assumed pod holds in its zones: devices always; cpu and memory only when it is
    Guaranteed (the kubelet pins nothing for the others)."""
    if pod.qos == QosClass.GUARANTEED:
        return pod
    keep = tuple(
        ContainerInfo(
            c.name, {r: q for r, q in c.requests.items() if r not in (CPU, MEMORY)}, c.init
        )
        for c in pod.container_list()
    )
    return replace(pod, containers=keep, qos=QosClass.GUARANTEED)


class NodeResourceTopologyMatch:
    name: ClassVar[str] = "NodeResourceTopologyMatch"
    extension_points: ClassVar[frozenset[str]] = frozenset({FILTER, SCORE})
    unsupported: ClassVar[tuple[str, ...]] = (
        "NRT cache modes (overreserve, discardreserved): the twin's NRT is always current",
    )

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        config = args if isinstance(args, NodeResourceTopologyMatchArgs) else None
        strategy = config.scoring_strategy if config is not None else ScoringStrategy()
        self.strategy = strategy.type
        self.weights = Weights({r.name: r.weight for r in strategy.resources})

    # ----- helpers -----
    def _nrt(self, st: ClusterState, i: int) -> ResourceTopology | None:
        return st.snap.nrt.get(st.name_of(i)) if st.snap.nrt else None

    def _zones(self, st: ClusterState, i: int, nrt: ResourceTopology) -> list[NumaZone]:
        """The zones at snapshot time minus the pods assumed on node ``i`` in this decision."""
        zones = zones_of(nrt)
        offered = _node_resources(st, i)
        for pod, place in st.assumed.values():
            if place.node == i:
                align(_exclusive_part(pod), nrt, zones, offered)
        return zones

    # ----- filter -----
    def filter_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> Status:
        if pod.qos == QosClass.BEST_EFFORT and all(is_native(r) for r in pod.requests):
            return SUCCESS
        nrt = self._nrt(st, i)
        if nrt is None or nrt.policy is not TopologyManagerPolicy.SINGLE_NUMA_NODE:
            return SUCCESS
        reason = align(pod, nrt, self._zones(st, i, nrt), _node_resources(st, i))
        return SUCCESS if reason is None else unschedulable(reason)

    def filter(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> BoolArray | None:
        if not st.snap.nrt:
            return None
        mask = np.ones(st.num_nodes, dtype=bool)
        for i in range(st.num_nodes):
            mask[i] = self.filter_node(cs, pod, st, i).ok
        return mask

    def filter_reasons(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray
    ) -> list[ReasonGroup]:
        by_reason: dict[str, list[int]] = {}
        for i in nodes:
            status = self.filter_node(cs, pod, st, int(i))
            by_reason.setdefault(status.message, []).append(int(i))
        return [
            ReasonGroup(self.name, Code.UNSCHEDULABLE, reason, np.array(ids, dtype=np.int64))
            for reason, ids in sorted(by_reason.items())
        ]

    # ----- score -----
    def score_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> int:
        if pod.qos != QosClass.GUARANTEED:
            return 100
        nrt = self._nrt(st, i)
        if nrt is None:
            return 0
        zones = self._zones(st, i, nrt)
        pod_scope = nrt.scope is TopologyManagerScope.POD
        if self.strategy == "LeastNUMANodes":
            parts = (
                [effective_request(pod)]
                if pod_scope
                else [dict(c.requests) for c in pod.container_list()]
            )
            return least_numa_score(pod.qos, zones, parts)
        if nrt.policy is not TopologyManagerPolicy.SINGLE_NUMA_NODE:
            return 0
        if pod_scope:
            return min_zone_score(effective_request(pod), zones, self.strategy, self.weights)
        scores = [
            min_zone_score(c.requests, zones, self.strategy, self.weights)
            for c in pod.container_list()
        ]
        return int(sum(scores) / len(scores))

    def score(self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray) -> IntArray:
        return np.array([self.score_node(cs, pod, st, int(i)) for i in nodes], dtype=np.int64)
