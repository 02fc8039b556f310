"""DefaultPreemption (kube-scheduler: framework/plugins/defaultpreemption/default_preemption.go
and framework/preemption/preemption.go): when nothing fits, evict lower-priority pods.

- Eligibility: ``preemptionPolicy: Never`` -> ``not eligible due to preemptionPolicy=Never.``
- Candidates: only nodes whose rejection was Unschedulable (not Unresolvable). On each, every pod
  of lower priority is removed; if the pod then passes every filter (nominated pods counted),
  the victims are reprieved one by one, most important first (higher priority, then running
  longer), keeping only those without which the pod does not fit: the minimal victims. The dry
  run stops after max(10% of the candidate nodes, 100) candidates (DefaultPreemptionArgs).
- Choice (pickOneNodeForPreemption): the node whose most important victim has the lowest
  priority, then the lowest sum of victim priorities, then the fewest victims, then the latest
  start among the highest-priority victims, then the first node.
- Result: the preemptor is nominated to that node and its victims are evicted by the caller; the
  lower-priority pods nominated there lose their nomination. When no node helps, the message is
  ``preemption: 0/N nodes are available: <reasons>.`` with every node not tried counted as
  ``Preemption is not helpful for scheduling``.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from gpuplane.scheduler.framework.explain import Diagnosis, ReasonGroup
from gpuplane.scheduler.framework.interfaces import POST_FILTER, Handle, PostFilterResult
from gpuplane.scheduler.framework.reference import diagnosis_from_statuses
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.status import SUCCESS, Code, Status, unresolvable, unschedulable
from gpuplane.scheduler.framework.types import PREEMPT_NEVER, BoundPod, IntArray, PodInfo

NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
_OFFSET = 2**31  # priorities shifted to >= 0 before summing (minSumPrioritiesScoreFunc)


class DefaultPreemptionArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    minCandidateNodesPercentage: int = Field(default=10, ge=0, le=100)
    minCandidateNodesAbsolute: int = Field(default=100, ge=0)


def importance(pod: BoundPod) -> tuple[int, float, str]:
    """MoreImportantPod as a sort key: higher priority, then earlier start, first."""
    return (-pod.priority, pod.start_s, pod.uid)


def pick_one_node(candidates: list[tuple[int, list[BoundPod]]]) -> tuple[int, list[BoundPod]]:
    """pickOneNodeForPreemption's ordered criteria (no PodDisruptionBudgets in the twin)."""

    def earliest_top_start(victims: list[BoundPod]) -> float:
        top = max(v.priority for v in victims)
        return min(v.start_s for v in victims if v.priority == top)

    criteria = (
        lambda v: -max(p.priority for p in v),
        lambda v: -sum(p.priority + _OFFSET for p in v),
        lambda v: -len(v),
        earliest_top_start,
    )
    pool = candidates
    for score in criteria:
        best = max(score(victims) for _, victims in pool)
        pool = [c for c in pool if score(c[1]) == best]
        if len(pool) == 1:
            break
    return pool[0]


class DefaultPreemption:
    name: ClassVar[str] = "DefaultPreemption"
    extension_points: ClassVar[frozenset[str]] = frozenset({POST_FILTER})
    unsupported: ClassVar[tuple[str, ...]] = (
        "PodDisruptionBudgets (the twin has none)",
        "a random offset for the dry run (gpuplane starts at the first node)",
        "victims waiting at Permit or assumed earlier in the same decision",
    )

    def __init__(self, args: DefaultPreemptionArgs | None, handle: Handle) -> None:
        self.args = args or DefaultPreemptionArgs()
        self.handle = handle

    def num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.args.minCandidateNodesPercentage // 100
        return min(max(n, self.args.minCandidateNodesAbsolute), num_nodes)

    def post_filter(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, diagnosis: Diagnosis
    ) -> PostFilterResult:
        if pod.preemption_policy == PREEMPT_NEVER:
            return PostFilterResult(
                unschedulable("preemption: not eligible due to preemptionPolicy=Never.")
            )
        potential = diagnosis.nodes_by_code(Code.UNSCHEDULABLE)
        candidates, statuses, no_victims = self._dry_run(cs, pod, st, potential)
        if not candidates:
            return self._not_helpful(st, statuses, no_victims)
        node, victims = pick_one_node(candidates)
        lower = [
            uid
            for uid, (other, i) in st.nominated.items()
            if i == node and other.priority < pod.priority and uid != pod.uid
        ]
        return PostFilterResult(
            SUCCESS,
            nominated_node=node,
            victims=tuple(v.uid for v in victims),
            clear_nominations=tuple(lower),
        )

    def _not_helpful(
        self, st: ClusterState, statuses: dict[int, Status], no_victims: list[int]
    ) -> PostFilterResult:
        diag = diagnosis_from_statuses(st, statuses)
        groups = diag.groups
        if no_victims:
            nodes = np.array(no_victims, dtype=np.int64)
            code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            groups = (*groups, ReasonGroup(self.name, code, NO_VICTIMS, nodes))
        diag = Diagnosis(
            diag.num_all_nodes,
            diag.node_names,
            groups,
            absent=(self.name, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NOT_HELPFUL),
        )
        message = "preemption: " + diag.message()
        return PostFilterResult(unschedulable(message), clear=True)

    def _dry_run(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, potential: IntArray
    ) -> tuple[list[tuple[int, list[BoundPod]]], dict[int, Status], list[int]]:
        """Candidates (node, victims) in node order, stopping once there are enough; the
        statuses of the nodes tried that are no candidates; the nodes with no victims at all."""
        want = self.num_candidates(int(potential.size))
        has_victims = st.lowest_priority()[potential] < pod.priority
        if not has_victims.any():  # nothing of lower priority anywhere: a quick "no"
            return [], {}, potential.tolist()
        statuses: dict[int, Status] = {}
        no_victims: list[int] = []
        candidates: list[tuple[int, list[BoundPod]]] = []
        for i, hopeful in zip(potential.tolist(), has_victims.tolist(), strict=True):
            if len(candidates) >= want:
                break
            if not hopeful:
                no_victims.append(i)
                continue
            victims, status = self.select_victims(cs, pod, st, i)
            if victims:
                candidates.append((i, victims))
            else:
                statuses[i] = status
        return candidates, statuses, no_victims

    def select_victims(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int
    ) -> tuple[list[BoundPod], Status]:
        """The fewest, least important pods to evict from node ``i`` (SelectVictimsOnNode)."""
        eligible = sorted((p for p in st.pods_on(i) if p.priority < pod.priority), key=importance)
        if not eligible:
            return [], unresolvable(NO_VICTIMS, plugin=self.name)
        removed: set[str] = set()
        try:
            for victim in eligible:
                st.remove_bound(i, victim, -1)
                removed.add(victim.uid)
            status = self.handle.run_filters_with_nominated(cs, pod, st, i)
            if not status.ok:
                return [], status
            victims: list[BoundPod] = []
            for victim in eligible:  # most important first: reprieve whoever we can
                st.remove_bound(i, victim, 1)
                removed.discard(victim.uid)
                check = self.handle.run_filters_with_nominated(cs, pod, st, i, dynamic_only=True)
                if not check.ok:
                    st.remove_bound(i, victim, -1)
                    removed.add(victim.uid)
                    victims.append(victim)
            return victims, SUCCESS
        finally:
            for victim in eligible:
                if victim.uid in removed:
                    st.remove_bound(i, victim, 1)
