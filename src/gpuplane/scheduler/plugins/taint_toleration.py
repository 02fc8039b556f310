"""TaintToleration (kube-scheduler: framework/plugins/tainttoleration/taint_toleration.go).

Filter: the node's first NoSchedule or NoExecute taint the pod does not tolerate rejects it,
``node(s) had untolerated taint {key: value}`` (UnschedulableAndUnresolvable).
Score: the number of PreferNoSchedule taints not tolerated by the pod's tolerations whose effect
is PreferNoSchedule or empty; NormalizeScore reverses it, so the fewest such taints scores 100.
Both depend on the node's taints and the pod's tolerations only: cached per snapshot generation.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import BaseModel

from gpuplane.api.taints import Taint, first_untolerated, tolerated
from gpuplane.scheduler.framework.explain import ReasonGroup
from gpuplane.scheduler.framework.interfaces import FILTER, SCORE, Handle
from gpuplane.scheduler.framework.normalize import default_normalize, default_normalize_reference
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.static_cache import StaticCache
from gpuplane.scheduler.framework.status import SUCCESS, Code, Status, unresolvable
from gpuplane.scheduler.framework.types import BoolArray, IntArray, PodInfo

FILTER_EFFECTS = frozenset({"NoSchedule", "NoExecute"})


def taint_reason(taint: Taint) -> str:
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


def _reason(taints: tuple[Taint, ...], pod: PodInfo) -> str | None:
    taint = first_untolerated(taints, pod.tolerations, FILTER_EFFECTS)
    return None if taint is None else taint_reason(taint)


def intolerable_prefer_no_schedule(taints: tuple[Taint, ...], pod: PodInfo) -> int:
    tolerations = [t for t in pod.tolerations if t.effect in (None, "", "PreferNoSchedule")]
    return sum(
        1 for t in taints if t.effect == "PreferNoSchedule" and not tolerated(t, tolerations)
    )


class TaintToleration:
    name: ClassVar[str] = "TaintToleration"
    extension_points: ClassVar[frozenset[str]] = frozenset({FILTER, SCORE})
    unsupported: ClassVar[tuple[str, ...]] = ()
    static_filter: ClassVar[bool] = True

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        self._filter_cache: StaticCache[tuple[BoolArray, list[str | None]]] = StaticCache()
        self._score_cache: StaticCache[IntArray] = StaticCache()

    def _filtered(self, pod: PodInfo, st: ClusterState) -> tuple[BoolArray, list[str | None]]:
        def compute() -> tuple[BoolArray, list[str | None]]:
            reasons = [_reason(taints, pod) for taints in st.snap.node_taints]
            return np.array([r is None for r in reasons], dtype=bool), reasons

        return self._filter_cache.get(st.snap, pod.tolerations, compute)

    def filter(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> BoolArray | None:
        return self._filtered(pod, st)[0]

    def filter_reasons(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray
    ) -> list[ReasonGroup]:
        reasons = self._filtered(pod, st)[1]
        by_reason: dict[str, list[int]] = {}
        for i in nodes:
            reason = reasons[int(i)]
            if reason is not None:
                by_reason.setdefault(reason, []).append(int(i))
        return [
            ReasonGroup(self.name, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, r, np.array(idx))
            for r, idx in by_reason.items()
        ]

    def filter_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> Status:
        reason = _reason(st.snap.node_taints[i], pod)
        return SUCCESS if reason is None else unresolvable(reason)

    def score(self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray) -> IntArray:
        def compute() -> IntArray:
            counts = [intolerable_prefer_no_schedule(t, pod) for t in st.snap.node_taints]
            return np.array(counts, dtype=np.int64)

        return self._score_cache.get(st.snap, pod.tolerations, compute)[nodes]

    def score_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> int:
        return intolerable_prefer_no_schedule(st.snap.node_taints[i], pod)

    def normalize(self, scores: IntArray) -> IntArray:
        return default_normalize(scores, reverse=True)

    def normalize_reference(self, scores: list[int]) -> list[int]:
        return default_normalize_reference(scores, reverse=True)
