"""InterPodAffinity (kube-scheduler v1.31: framework/plugins/interpodaffinity), in kube's default
profile at weight 2.

Terms: ``terms``; the required rules (PreFilter/Filter): ``filtering``; the
preferences (PreScore/Score/NormalizeScore): ``scoring``. A pod with no required terms
in a cluster where no existing pod's required anti-affinity matches it skips Filter (PreFilter
answers Skip); with nothing to score it skips Score. Pods that carry no pod (anti-)affinity and
meet none cost a pass over the few existing pods that do.

Args (kubescheduler.config.k8s.io/v1 InterPodAffinityArgs): ``hardPodAffinityWeight`` (0-100,
default 1), ``ignorePreferredTermsOfExistingPods`` (default false).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from gpuplane.scheduler.framework.explain import ReasonGroup
from gpuplane.scheduler.framework.interfaces import FILTER, PRE_FILTER, PRE_SCORE, SCORE, Handle
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.status import SUCCESS, Code, Status, skip
from gpuplane.scheduler.framework.types import BoolArray, IntArray, PodInfo
from gpuplane.scheduler.plugins.interpodaffinity import scoring as affinity_scoring
from gpuplane.scheduler.plugins.interpodaffinity.filtering import (
    AFFINITY,
    ANTI_AFFINITY,
    EXISTING_ANTI_AFFINITY,
    PASS,
    AffinityFilterState,
    existing_anti_counts,
    filter_codes,
    incoming_counts,
    matches_all,
    node_code,
)
from gpuplane.scheduler.plugins.interpodaffinity.terms import (
    NO_TERMS,
    TermCache,
    incoming_terms,
    namespace_labels,
)
from gpuplane.scheduler.plugins.topology_domains import DomainCache

NAME = "InterPodAffinity"
REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"
_STATUS = {
    AFFINITY: (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_AFFINITY),
    ANTI_AFFINITY: (Code.UNSCHEDULABLE, REASON_ANTI_AFFINITY),
    EXISTING_ANTI_AFFINITY: (Code.UNSCHEDULABLE, REASON_EXISTING),
}
_FILTER_KEY = f"PreFilter{NAME}"
_CODES_KEY = f"{NAME}/codes"
_SCORE_KEY = f"PreScore{NAME}"
_SKIP = skip(NAME)


class InterPodAffinityArgs(BaseModel):
    """kubescheduler.config.k8s.io/v1 InterPodAffinityArgs."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    hardPodAffinityWeight: int = Field(default=1, ge=0, le=100, description="0 to 100")
    ignorePreferredTermsOfExistingPods: bool = False


class InterPodAffinity:
    name: ClassVar[str] = NAME
    extension_points: ClassVar[frozenset[str]] = frozenset({PRE_FILTER, FILTER, PRE_SCORE, SCORE})
    unsupported: ClassVar[tuple[str, ...]] = ()
    reads_moved_pods: ClassVar[bool] = True

    def __init__(self, args: InterPodAffinityArgs | None, handle: Handle) -> None:
        self.args = args or InterPodAffinityArgs()
        self._terms = TermCache()
        self._domains = DomainCache()

    def may_fit_after_others(self, pod: PodInfo) -> bool:
        """Required affinity is met once a matching pod is placed."""
        return bool(self._terms.get(pod).required_affinity)

    # ----- PreFilter / Filter -----
    def pre_filter(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> Status:
        own = self._terms.get(pod)
        if own is NO_TERMS and not st.any_pod_affinity():
            return _SKIP
        terms = incoming_terms(own, st.snap)
        ns_labels = namespace_labels(st.snap, pod.namespace)
        existing = existing_anti_counts(st, pod, ns_labels, self._terms)
        if not existing and not terms.required_affinity and not terms.required_anti:
            return _SKIP
        affinity, anti = incoming_counts(st, terms, self._domains)
        cs.data[_FILTER_KEY] = AffinityFilterState(
            pod=pod,
            namespace_labels=ns_labels,
            affinity=terms.required_affinity,
            anti=terms.required_anti,
            existing_anti=existing,
            affinity_counts=affinity,
            anti_counts=anti,
            self_match=matches_all(terms.required_affinity, pod.namespace, pod.labels),
        )
        return SUCCESS

    def _state(self, cs: CycleState) -> AffinityFilterState | None:
        state = cs.data.get(_FILTER_KEY)
        return state if isinstance(state, AffinityFilterState) else None

    def filter(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> BoolArray | None:
        state = self._state(cs)
        if state is None:
            return None
        codes = filter_codes(state, st, self._domains)
        for i in st.moved_nodes():
            codes[i] = node_code(state, st, i, self._terms)
        cs.data[_CODES_KEY] = codes
        mask: BoolArray = codes == PASS
        return mask

    def filter_reasons(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray
    ) -> list[ReasonGroup]:
        codes = cs.data.get(_CODES_KEY)
        state = self._state(cs)
        if not isinstance(codes, np.ndarray) and state is not None:
            codes = np.array([node_code(state, st, i, self._terms) for i in range(st.num_nodes)])
        assert isinstance(codes, np.ndarray)
        picked = codes[nodes]
        out = []
        for code, (status_code, reason) in _STATUS.items():
            hit = nodes[picked == code]
            if hit.size:
                out.append(ReasonGroup(self.name, status_code, reason, hit))
        return out

    def filter_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> Status:
        state = self._state(cs)
        code = PASS if state is None else node_code(state, st, i, self._terms)
        if code == PASS:
            return SUCCESS
        status_code, reason = _STATUS[code]
        return Status(status_code, (reason,))

    # ----- PreScore / Score / NormalizeScore -----
    def pre_score(self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray) -> Status:
        if nodes.size == 0:
            return _SKIP
        args = (self.args.hardPodAffinityWeight, self.args.ignorePreferredTermsOfExistingPods)
        state = affinity_scoring.pre_score_state(st, pod, self._terms, self._domains, args)
        if state is None:
            return _SKIP
        cs.data[_SCORE_KEY] = state
        return SUCCESS

    def _score_state(self, cs: CycleState) -> affinity_scoring.AffinityScoreState:
        state = cs.data[_SCORE_KEY]
        assert isinstance(state, affinity_scoring.AffinityScoreState)
        return state

    def score(self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray) -> IntArray:
        return affinity_scoring.scores(self._score_state(cs), st, nodes, self._domains)

    def score_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> int:
        return affinity_scoring.score_one(self._score_state(cs), st, i)

    def normalize(self, scores: IntArray) -> IntArray:
        return affinity_scoring.normalize(scores)

    def normalize_reference(self, scores: list[int]) -> list[int]:
        return affinity_scoring.normalize_reference(scores)
