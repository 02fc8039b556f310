"""PodTopologySpread (kube-scheduler v1.31: framework/plugins/podtopologyspread), in kube's
default profile at weight 2.

Which constraints apply and which nodes count: ``constraints``; the hard rule
(PreFilter/Filter, DoNotSchedule): ``filtering``; the preference (PreScore/Score/
NormalizeScore, ScheduleAnyway): ``scoring``. A pod with no constraint at a point skips
it: PreFilter answers Skip (its Filter does not run), PreScore answers Skip (no Score). So a
pod with no constraints of its own and no default selector costs two look-ups.

Args (kubescheduler.config.k8s.io/v1 PodTopologySpreadArgs): ``defaultingType`` System (the
built-in defaults: maxSkew 3 over ``kubernetes.io/hostname``, 5 over
``topology.kubernetes.io/zone``, ScheduleAnyway) or List (``defaultConstraints``, which must not
carry a selector: each pod's default selector is used).
"""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from gpuplane.api.topology_spread import (
    DO_NOT_SCHEDULE,
    SCHEDULE_ANYWAY,
    TopologySpreadConstraint,
)
from gpuplane.scheduler.framework.explain import ReasonGroup
from gpuplane.scheduler.framework.interfaces import FILTER, PRE_FILTER, PRE_SCORE, SCORE, Handle
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.status import SUCCESS, Code, Status, skip
from gpuplane.scheduler.framework.types import BoolArray, IntArray, PodInfo
from gpuplane.scheduler.plugins.podtopologyspread import scoring as spread_scoring
from gpuplane.scheduler.plugins.podtopologyspread.constraints import (
    SYSTEM_DEFAULT_CONSTRAINTS,
    InclusionCache,
    pod_constraints,
)
from gpuplane.scheduler.plugins.podtopologyspread.filtering import (
    MISSING_LABEL,
    PASS,
    SKEW,
    SpreadFilterState,
    filter_codes,
    node_code,
    pre_filter_state,
)
from gpuplane.scheduler.plugins.topology_domains import DomainCache

NAME = "PodTopologySpread"
REASON = "node(s) didn't match pod topology spread constraints"
REASON_MISSING_LABEL = f"{REASON} (missing required label)"
_FILTER_KEY = f"PreFilter{NAME}"
_CODES_KEY = f"{NAME}/codes"
_SCORE_KEY = f"PreScore{NAME}"
_SKIP = skip(NAME)


class DefaultConstraint(BaseModel):
    """One of PodTopologySpreadArgs.defaultConstraints (no labelSelector: it is per pod)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    maxSkew: int = Field(ge=1, description="at least 1")
    topologyKey: str = Field(min_length=1, description="a node label key")
    whenUnsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"]


class PodTopologySpreadArgs(BaseModel):
    """kubescheduler.config.k8s.io/v1 PodTopologySpreadArgs."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    defaultConstraints: list[DefaultConstraint] = Field(default_factory=list)
    defaultingType: Literal["System", "List"] = "System"

    @model_validator(mode="after")
    def _check(self) -> PodTopologySpreadArgs:
        if self.defaultingType == "System" and self.defaultConstraints:
            raise ValueError("defaultingType: when .defaultConstraints are not empty must be List")
        seen: set[tuple[str, str]] = set()
        for c in self.defaultConstraints:
            pair = (c.topologyKey, c.whenUnsatisfiable)
            if pair in seen:
                raise ValueError(f"defaultConstraints: Duplicate value: {{{pair[0]}, {pair[1]}}}")
            seen.add(pair)
        return self


class PodTopologySpread:
    name: ClassVar[str] = NAME
    extension_points: ClassVar[frozenset[str]] = frozenset({PRE_FILTER, FILTER, PRE_SCORE, SCORE})
    unsupported: ClassVar[tuple[str, ...]] = ()
    reads_moved_pods: ClassVar[bool] = True

    def __init__(self, args: PodTopologySpreadArgs | None, handle: Handle) -> None:
        self.args = args or PodTopologySpreadArgs()
        self.system_defaulted = self.args.defaultingType == "System"
        self.defaults: tuple[TopologySpreadConstraint, ...] = (
            SYSTEM_DEFAULT_CONSTRAINTS
            if self.system_defaulted
            else tuple(
                TopologySpreadConstraint(c.maxSkew, c.topologyKey, c.whenUnsatisfiable)
                for c in self.args.defaultConstraints
            )
        )
        self._domains = DomainCache()
        self._inclusion = InclusionCache()

    def may_fit_after_others(self, pod: PodInfo) -> bool:
        """A hard constraint's minimum rises as the emptiest domain fills."""
        return bool(pod_constraints(pod, self.defaults, DO_NOT_SCHEDULE))

    # ----- PreFilter / Filter -----
    def pre_filter(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> Status:
        constraints = pod_constraints(pod, self.defaults, DO_NOT_SCHEDULE)
        if not constraints:
            return _SKIP
        state = pre_filter_state(st, pod, constraints, self._domains, self._inclusion)
        cs.data[_FILTER_KEY] = state
        return SUCCESS

    def _state(self, cs: CycleState) -> SpreadFilterState | None:
        state = cs.data.get(_FILTER_KEY)
        return state if isinstance(state, SpreadFilterState) else None

    def filter(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> BoolArray | None:
        state = self._state(cs)
        if state is None:
            return None
        codes = filter_codes(state, st.num_nodes)
        for i in st.moved_nodes():
            codes[i] = node_code(state, st, i)
        cs.data[_CODES_KEY] = codes
        mask: BoolArray = codes == PASS
        return mask

    def filter_reasons(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray
    ) -> list[ReasonGroup]:
        codes = cs.data.get(_CODES_KEY)
        state = self._state(cs)
        if not isinstance(codes, np.ndarray) and state is not None:
            codes = np.array([node_code(state, st, i) for i in range(st.num_nodes)])
        assert isinstance(codes, np.ndarray)
        picked = codes[nodes]
        out = []
        for code, status_code, reason in (
            (MISSING_LABEL, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_MISSING_LABEL),
            (SKEW, Code.UNSCHEDULABLE, REASON),
        ):
            hit = nodes[picked == code]
            if hit.size:
                out.append(ReasonGroup(self.name, status_code, reason, hit))
        return out

    def filter_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> Status:
        state = self._state(cs)
        code = PASS if state is None else node_code(state, st, i)
        if code == MISSING_LABEL:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (REASON_MISSING_LABEL,))
        if code == SKEW:
            return Status(Code.UNSCHEDULABLE, (REASON,))
        return SUCCESS

    # ----- PreScore / Score / NormalizeScore -----
    def pre_score(self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray) -> Status:
        constraints = pod_constraints(pod, self.defaults, SCHEDULE_ANYWAY)
        if not constraints or st.num_nodes == 0:
            return _SKIP
        # Nodes missing a key are ignored unless the constraints are the System defaults.
        require_all = bool(pod.topology_spread_constraints) or not self.system_defaulted
        cs.data[_SCORE_KEY] = spread_scoring.pre_score_state(
            st, pod, nodes, constraints, require_all, (self._domains, self._inclusion)
        )
        return SUCCESS

    def _score_state(self, cs: CycleState) -> spread_scoring.SpreadScoreState:
        state = cs.data[_SCORE_KEY]
        assert isinstance(state, spread_scoring.SpreadScoreState)
        return state

    def score(self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray) -> IntArray:
        return spread_scoring.scores(self._score_state(cs), nodes)

    def score_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> int:
        return spread_scoring.score_one(self._score_state(cs), i)

    def normalize(self, scores: IntArray) -> IntArray:
        return spread_scoring.normalize(scores)

    def normalize_reference(self, scores: list[int]) -> list[int]:
        return spread_scoring.normalize_reference(scores)
