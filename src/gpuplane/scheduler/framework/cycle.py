"""One profile's plugins, run on one pod at a time in kube-scheduler's order
(schedule_one.go: schedulingCycle, schedulePod, bindingCycle; framework/runtime/framework.go).

``schedule_one`` is the scheduling cycle: PreFilter, Filter (the nominated node first, if any),
PostFilter when nothing fits, PreScore/Score/NormalizeScore, Reserve, Permit. A pod Permit
allows goes through the binding cycle (PreBind, Bind) at once; a waiting one keeps its
reservation in the state until a plugin allows or rejects it, or its wait times out.

A PreFilter or Filter plugin answering Error (not Unschedulable) fails the attempt with that
error: no other node is tried, PostFilter does not run, the pod's nomination is cleared, and the
failure is marked ``error`` (kube: PodScheduled reason SchedulerError, the pod retried after its
back-off rather than waiting for a cluster event). An Error on the nominated node alone is only
logged by kube-scheduler, which then searches all nodes; so it is here.
"""

from __future__ import annotations

import zlib
from typing import cast

import numpy as np

from gpuplane.scheduler.framework.decision import DecisionBuilder, Preemption, Unschedulable
from gpuplane.scheduler.framework.explain import Diagnosis, ReasonGroup, pre_filter_error
from gpuplane.scheduler.framework.filtering import (
    charge_nominated,
    filter_all,
    filter_errors,
    first_error,
    first_feasible,
    num_feasible_nodes_to_find,
)
from gpuplane.scheduler.framework.interfaces import (
    BIND,
    FILTER,
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    PERMIT,
    POST_FILTER,
    PRE_BIND,
    PRE_FILTER,
    PRE_SCORE,
    QUEUE_SORT,
    RESERVE,
    SCORE,
    BindPlugin,
    FilterPlugin,
    FitsAfterOthers,
    NormalizeScorePlugin,
    PermitPlugin,
    Plugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
    chosen_placement,
    pre_filter_nodes,
)
from gpuplane.scheduler.framework.plugin_sets import ResolvedProfile
from gpuplane.scheduler.framework.registry import Registry
from gpuplane.scheduler.framework.state import ClusterState, CycleState, Placement, Waiting
from gpuplane.scheduler.framework.status import SUCCESS, Code, Status
from gpuplane.scheduler.framework.types import IntArray, PodInfo
from gpuplane.scheduler.framework.writes import WriteSink

NO_NODES = "no nodes available to schedule pods"


def tie_break(uid: str, count: int) -> int:
    """Which of ``count`` equally good nodes a pod takes: stable, uniform over pods."""
    return zlib.crc32(uid.encode("utf-8")) % count if count > 1 else 0


def one_node_failure(pod: PodInfo, st: ClusterState, i: int, status: Status) -> Unschedulable:
    """A rejection after a node was chosen (Reserve, Permit, PreBind, Bind): kube-scheduler
    reports it as a FitError over that one node."""
    group = ReasonGroup(status.plugin, status.code, status.message, np.array([i], dtype=np.int64))
    diag = Diagnosis(1, (st.name_of(i),), (group,))
    return Unschedulable(pod.uid, diag.message(), diag)


class Framework:
    """A profile: its plugins per extension point and the cycles that run them. Plugins are
    built here, with this framework as their Handle."""

    def __init__(self, profile: ResolvedProfile, registry: Registry) -> None:
        self.profile = profile
        self._writes = WriteSink()
        self.plugins: dict[str, Plugin] = {
            name: registry.get(name).factory(profile.args[name], self)
            for name in profile.plugin_names()
        }
        self.queue_sort = cast(QueueSortPlugin, self._at(QUEUE_SORT)[0])
        self.pre_filters = [cast(PreFilterPlugin, p) for p in self._at(PRE_FILTER)]
        self.filters = [cast(FilterPlugin, p) for p in self._at(FILTER)]
        # Filters whose verdict depends on pods on the node (not only labels, taints, cordon).
        self.dynamic_filters = [p for p in self.filters if not getattr(p, "static_filter", False)]
        # Filters that read the pods added to or taken off a node for one run (AddPod/RemovePod).
        self.move_readers = frozenset(
            p.name for p in self.filters if getattr(p, "reads_moved_pods", False)
        )
        self.post_filters = [cast(PostFilterPlugin, p) for p in self._at(POST_FILTER)]
        self.pre_scores = [cast(PreScorePlugin, p) for p in self._at(PRE_SCORE)]
        self.scores = [
            (cast(ScorePlugin, self.plugins[p.name]), p.weight) for p in profile.points[SCORE]
        ]
        # ScoreExtensions (NormalizeScore), looked up once.
        self.normalizers = {
            plugin.name: cast(NormalizeScorePlugin, plugin)
            for plugin, _ in self.scores
            if hasattr(plugin, "normalize")
        }
        # Plugins for which pods placed later may make a failed pod fit (the scheduler then does
        # not reuse a failure for an identical pod).
        self.fit_after_others = [
            cast(FitsAfterOthers, p)
            for p in self.plugins.values()
            if hasattr(p, "may_fit_after_others")
        ]
        self.reserves = [cast(ReservePlugin, p) for p in self._at(RESERVE)]
        self.permits = [cast(PermitPlugin, p) for p in self._at(PERMIT)]
        self.pre_binds = [cast(PreBindPlugin, p) for p in self._at(PRE_BIND)]
        self.binds = [cast(BindPlugin, p) for p in self._at(BIND)]

    def _at(self, point: str) -> list[Plugin]:
        return [self.plugins[p.name] for p in self.profile.points[point]]

    # ----- Handle -----
    @property
    def profile_name(self) -> str:
        return self.profile.scheduler_name

    @property
    def writes(self) -> WriteSink:
        return self._writes

    def start_decision(self, writes: WriteSink) -> None:
        """Plugins record the coming decision's writes in ``writes`` (the Scheduler's, shared by
        its profiles, as kube-scheduler's profiles share one API client and DRA manager)."""
        self._writes = writes

    def run_filters_with_nominated(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int, *, dynamic_only: bool = False
    ) -> Status:
        nominated = st.nominated_for(pod).get(i) if st.nominated else None
        if nominated:
            charge_nominated(st, {i: nominated}, 1)
            try:
                status = self.run_filters(cs, pod, st, i, dynamic_only=dynamic_only)
            finally:
                charge_nominated(st, {i: nominated}, -1)
            if not status.ok:
                return status
        return self.run_filters(cs, pod, st, i, dynamic_only=dynamic_only)

    def run_filters(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int, *, dynamic_only: bool = False
    ) -> Status:
        """Every Filter plugin on node ``i`` until one rejects it; ``dynamic_only`` skips those
        whose verdict cannot change when pods come and go (they passed already)."""
        skipped = cs.skip_filter
        for plugin in self.dynamic_filters if dynamic_only else self.filters:
            if skipped and plugin.name in skipped:
                continue
            status = plugin.filter_node(cs, pod, st, i)
            if not status.ok:
                return status.with_plugin(plugin.name)
        return SUCCESS

    def allow_waiting(self, st: ClusterState, uid: str, plugin: str) -> None:
        w = st.waiting.get(uid)
        if w is not None:
            w.pending.discard(plugin)
            if not w.pending and uid not in st.allowed:
                st.allowed.append(uid)

    def reject_waiting(self, st: ClusterState, uid: str, plugin: str, message: str) -> None:
        if uid in st.waiting:
            st.rejections.append((uid, plugin, message))

    # ----- scheduling cycle -----
    def schedule_one(self, st: ClusterState, pod: PodInfo, out: DecisionBuilder) -> bool:
        """One scheduling cycle; True when no node fitted (the failure depends only on the
        pod's spec and the room left, unlike a rejection after a node was chosen)."""
        cs = CycleState()
        found = self.find_nodes(cs, pod, st)
        if isinstance(found, Diagnosis):
            self._fail(cs, pod, st, found, out)
            return True
        node = int(found[0]) if found.size == 1 else self.select_host(cs, pod, st, found)
        self._reserve_permit(cs, pod, st, node, out)
        return False

    def find_nodes(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> IntArray | Diagnosis:
        """Feasible node indices, or why there are none."""
        if st.num_nodes == 0:
            return Diagnosis(0, (), pre_filter_msg=NO_NODES)
        st.track_moves = False
        for plugin in self.pre_filters:
            status = plugin.pre_filter(cs, pod, st)
            if status.code is Code.ERROR:
                error = pre_filter_error(plugin.name, status.message)
                return Diagnosis(st.num_nodes, st.snap.node_names, error=error)
            if status.code is Code.SKIP:
                cs.skip_filter.add(plugin.name)
                continue
            if not status.ok:
                absent = (plugin.name, status.code, status.message)
                return Diagnosis(
                    st.num_nodes,
                    st.snap.node_names,
                    absent=absent,
                    pre_filter_msg=status.message,
                    unschedulable_plugins=frozenset({plugin.name}),
                )
        st.track_moves = bool(self.move_readers - cs.skip_filter)
        if pod.nominated_node is not None and pod.nominated_node in st.snap.node_names:
            # The node preemption made room on is tried first (evaluateNominatedNode).
            i = st.index_of(pod.nominated_node)
            if self.run_filters_with_nominated(cs, pod, st, i).ok:
                return np.array([i], dtype=np.int64)
        return self.filter_nodes(cs, pod, st)

    def num_to_find(self, st: ClusterState) -> int:
        percentage = self.profile.percentage_of_nodes_to_score
        return num_feasible_nodes_to_find(percentage, st.num_nodes, bool(self.scores))

    def filter_nodes(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> IntArray | Diagnosis:
        mask, masks, diagnosis = filter_all(self.filters, cs, pod, st)
        feasible, k, named = np.flatnonzero(mask), self.num_to_find(st), pre_filter_nodes(cs)
        error = first_error(st, feasible, filter_errors(cs, pod, st, masks), k, named)
        if error is not None:
            return Diagnosis(st.num_nodes, st.snap.node_names, error=error)
        if diagnosis is not None:
            return diagnosis
        return first_feasible(st, feasible, k, named)

    def select_host(self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray) -> int:
        """The feasible node with the highest weighted score. kube-scheduler picks among equal
        scores at random (selectHost's reservoir sampling); here the pod's uid picks, so the
        choice spreads the same way but the run stays deterministic."""
        total = self.prioritize(cs, pod, st, nodes)
        ties = np.flatnonzero(total == total.max())
        return int(nodes[int(ties[tie_break(pod.uid, ties.size)])])

    def _skipped(self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray) -> set[str]:
        skipped: set[str] = set()
        for plugin in self.pre_scores:
            status = plugin.pre_score(cs, pod, st, nodes)
            if status.code is Code.SKIP:
                skipped.add(plugin.name)
        return skipped

    def prioritize(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray
    ) -> IntArray:
        total = np.zeros(nodes.size, dtype=np.int64)
        skipped = self._skipped(cs, pod, st, nodes)
        for plugin, weight in self.scores:
            if plugin.name in skipped:
                continue
            scores = plugin.score(cs, pod, st, nodes)
            normalizer = self.normalizers.get(plugin.name)
            if normalizer is not None:
                scores = normalizer.normalize(scores)
            if scores.size and (scores.min() < MIN_NODE_SCORE or scores.max() > MAX_NODE_SCORE):
                raise ValueError(f"plugin {plugin.name} returned a score outside [0, 100]")
            total += weight * scores
        return total

    # ----- after a node is chosen -----
    def run_unreserve(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> None:
        """Unreserve in reverse order; the pod will not bind, so its writes are dropped."""
        for plugin in reversed(self.reserves):
            plugin.unreserve(cs, pod, st, i)
        self._writes.drop(pod.uid)

    def _reserve_permit(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int, out: DecisionBuilder
    ) -> None:
        for plugin in self.reserves:
            status = plugin.reserve(cs, pod, st, i)
            if not status.ok:
                self.run_unreserve(cs, pod, st, i)
                out.fail(one_node_failure(pod, st, i, status.with_plugin(plugin.name)))
                return
        place = chosen_placement(cs) or st.default_placement(i, pod)
        st.assume(pod, place)
        st.nominated.pop(pod.uid, None)
        waits: dict[str, float] = {}
        for permit in self.permits:
            status = permit.permit(cs, pod, st, i)
            if status.code is Code.WAIT:
                waits[permit.name] = status.wait_s
            elif not status.ok:
                self.run_unreserve(cs, pod, st, i)
                st.forget(pod.uid)
                out.fail(one_node_failure(pod, st, i, status.with_plugin(permit.name)))
                return
        if waits:
            first = min(waits, key=lambda name: (waits[name], name))
            st.waiting[pod.uid] = Waiting(
                pod, place, st.now_s + waits[first], first, waits[first], set(waits), cs
            )
            return
        self.bind(cs, pod, st, place, out)

    def bind(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, place: Placement, out: DecisionBuilder
    ) -> None:
        """The binding cycle: PreBind, then Bind plugins until one does not skip."""
        node = st.name_of(place.node)
        for plugin in self.pre_binds:
            status = plugin.pre_bind(cs, pod, node)
            if not status.ok:
                self._bind_failed(cs, pod, st, place, status.with_plugin(plugin.name), out)
                return
        for binder in self.binds:
            status = binder.bind(cs, pod, node)
            if status.code is Code.SKIP:
                continue
            if not status.ok:
                self._bind_failed(cs, pod, st, place, status.with_plugin(binder.name), out)
                return
            out.bind(pod, node, place)
            return
        self._bind_failed(cs, pod, st, place, Status(Code.ERROR, ("no bind plugin bound",)), out)

    def _bind_failed(
        self,
        cs: CycleState,
        pod: PodInfo,
        st: ClusterState,
        place: Placement,
        status: Status,
        out: DecisionBuilder,
    ) -> None:
        self.run_unreserve(cs, pod, st, place.node)
        st.forget(pod.uid)
        out.fail(one_node_failure(pod, st, place.node, status))

    # ----- no node fits -----
    def run_post_filters(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, diagnosis: Diagnosis
    ) -> PostFilterResult:
        """Until one succeeds or answers Unresolvable; else every plugin's reasons, joined
        (framework/runtime RunPostFilterPlugins)."""
        reasons: list[str] = []
        clear = False
        for plugin in self.post_filters:
            result = plugin.post_filter(cs, pod, st, diagnosis)
            status = result.status
            if status.ok or status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return result
            clear = clear or result.clear
            reasons.extend(status.reasons)
        return PostFilterResult(Status(Code.UNSCHEDULABLE, tuple(reasons)), clear=clear)

    def _fail(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, diag: Diagnosis, out: DecisionBuilder
    ) -> None:
        if diag.error:
            # schedulingCycle: not a FitError, so no PostFilter and the nomination is cleared.
            out.fail(Unschedulable(pod.uid, diag.error, diag, clear_nomination=True, error=True))
            return
        if not self.post_filters or diag.pre_filter_msg == NO_NODES:
            out.fail(Unschedulable(pod.uid, diag.message(), diag, clear_nomination=True))
            return
        result = self.run_post_filters(cs, pod, st, diag)
        diag = diag.with_post_filter(result.status.message)
        node: str | None = None
        if result.status.ok and result.nominated_node is not None:
            node = st.name_of(result.nominated_node)
            st.nominate(pod, result.nominated_node)
            out.preemptions.append(Preemption(pod.uid, node, result.victims))
            for uid in result.clear_nominations:
                st.nominated.pop(uid, None)
                out.cleared.append(uid)
        elif result.clear:
            st.nominated.pop(pod.uid, None)
        out.fail(
            Unschedulable(
                pod.uid, diag.message(), diag, nominated_node=node, clear_nomination=result.clear
            )
        )
