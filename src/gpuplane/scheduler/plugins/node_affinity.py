"""NodeAffinity (kube-scheduler: framework/plugins/nodeaffinity/node_affinity.go).

Filter: ``spec.nodeSelector`` and the required node affinity must both match the node's labels
(GPU Feature Discovery's ``nvidia.com/gpu.product``, ``nvidia.com/gpu.memory`` and so on are
ordinary labels here), else ``node(s) didn't match Pod's node affinity/selector``
(UnschedulableAndUnresolvable).
PreFilter: when every required term names nodes (``matchFields`` ``metadata.name In``, as the
DaemonSet controller writes it), only those nodes are candidates (PreFilterResult.NodeNames): the
framework filters no other node and leaves the others out of the FitError's reasons; terms whose
names do not intersect are rejected at once (``pod affinity terms conflict``).
Score: the sum of the weights of the preferred terms the node matches; NormalizeScore scales by
the best node. PreScore skips the plugin for pods without preferred terms.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import BaseModel

from gpuplane.scheduler.framework.explain import ReasonGroup
from gpuplane.scheduler.framework.interfaces import (
    FILTER,
    PRE_FILTER,
    PRE_FILTER_NODES_KEY,
    PRE_SCORE,
    SCORE,
    Handle,
)
from gpuplane.scheduler.framework.matching import (
    node_affinity,
    preferred_score,
    preferred_terms,
    required_matches,
    required_node_names,
    selector_matches,
)
from gpuplane.scheduler.framework.normalize import default_normalize, default_normalize_reference
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.static_cache import StaticCache
from gpuplane.scheduler.framework.status import SUCCESS, Code, Status, skip, unresolvable
from gpuplane.scheduler.framework.types import BoolArray, IntArray, PodInfo

REASON = "node(s) didn't match Pod's node affinity/selector"
CONFLICT = "pod affinity terms conflict"


def _matches(pod: PodInfo, st: ClusterState, i: int) -> bool:
    labels = st.snap.node_labels[i]
    return selector_matches(pod.node_selector, labels) and required_matches(
        pod.affinity, labels, st.snap.node_names[i]
    )


class NodeAffinity:
    name: ClassVar[str] = "NodeAffinity"
    extension_points: ClassVar[frozenset[str]] = frozenset({PRE_FILTER, FILTER, PRE_SCORE, SCORE})
    unsupported: ClassVar[tuple[str, ...]] = ("NodeAffinityArgs.addedAffinity",)
    static_filter: ClassVar[bool] = True

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        self._filter_cache: StaticCache[BoolArray] = StaticCache()
        self._score_cache: StaticCache[IntArray] = StaticCache()

    def pre_filter(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> Status:
        names = required_node_names(pod.affinity)
        if names is None:
            return SUCCESS
        if not names:
            return unresolvable(CONFLICT)
        # Names of nodes the snapshot does not hold are dropped, as findNodesThatFitPod does.
        known = set(st.snap.node_names)
        found = sorted(st.index_of(n) for n in names if n in known)
        cs.data[PRE_FILTER_NODES_KEY] = np.array(found, dtype=np.int64)
        return SUCCESS

    def filter(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> BoolArray | None:
        rules = node_affinity(pod.affinity)  # pod (anti-)affinity is not this plugin's
        if not pod.node_selector and not rules:
            return None
        key = (tuple(sorted(pod.node_selector.items())), repr(rules))

        def compute() -> BoolArray:
            return np.array([_matches(pod, st, i) for i in range(st.num_nodes)], dtype=bool)

        return self._filter_cache.get(st.snap, key, compute)

    def filter_reasons(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray
    ) -> list[ReasonGroup]:
        return [ReasonGroup(self.name, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON, nodes)]

    def filter_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> Status:
        return SUCCESS if _matches(pod, st, i) else unresolvable(REASON)

    def pre_score(self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray) -> Status:
        return SUCCESS if preferred_terms(pod.affinity) else skip(self.name)

    def score(self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray) -> IntArray:
        terms = preferred_terms(pod.affinity)

        def compute() -> IntArray:
            names, labels = st.snap.node_names, st.snap.node_labels
            values = [preferred_score(terms, labels[i], names[i]) for i in range(st.num_nodes)]
            return np.array(values, dtype=np.int64)

        return self._score_cache.get(st.snap, repr(node_affinity(pod.affinity)), compute)[nodes]

    def score_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> int:
        terms = preferred_terms(pod.affinity)
        return preferred_score(terms, st.snap.node_labels[i], st.snap.node_names[i])

    def normalize(self, scores: IntArray) -> IntArray:
        return default_normalize(scores, reverse=False)

    def normalize_reference(self, scores: list[int]) -> list[int]:
        return default_normalize_reference(scores, reverse=False)
