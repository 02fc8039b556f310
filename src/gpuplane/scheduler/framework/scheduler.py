"""kube-scheduler as a pure decision: ``Scheduler(profiles, registry=...).decide(snap, pending)``
over the plugins of the registry it is given (``gpuplane.scheduler.plugins.registry``).

One decision runs, in order: the pods already waiting at Permit are re-assumed and those whose
wait is over are rejected (their Unreserve rejects their gang); then every pending pod, in queue
order, gets a scheduling cycle with the profile its ``schedulerName`` names, seeing what the
previous cycles assumed. Waiting pods that a plugin allowed are bound, rejected ones released.

A pod whose requests, filters and priority equal those of a pod no node fitted in this decision
fails the same way without a new cycle, as long as no room was given back in between: room only
shrinks while pods are assumed, so the first pod's diagnosis holds for the second. Plugins for
which assumed pods can make room (``may_fit_after_others``: required pod affinity, hard
spreading) exempt the pods they say so of.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuplane.scheduler.framework.config import ProfileConfig, check_profiles
from gpuplane.scheduler.framework.cycle import Framework, one_node_failure
from gpuplane.scheduler.framework.decision import DecisionBuilder, SchedulingDecision, Unschedulable
from gpuplane.scheduler.framework.explain import go_duration
from gpuplane.scheduler.framework.interfaces import QueuedPodInfo
from gpuplane.scheduler.framework.plugin_sets import resolve_profile
from gpuplane.scheduler.framework.reference import ReferenceFramework
from gpuplane.scheduler.framework.registry import Registry
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.state import ClusterState, CycleState, Placement, Waiting
from gpuplane.scheduler.framework.status import Code, Status
from gpuplane.scheduler.framework.types import PodInfo
from gpuplane.scheduler.framework.writes import WriteSink

_Key = tuple[object, ...]


def equivalence_key(pod: PodInfo) -> _Key | None:
    """What decides a pod's fate in a cycle, for pods that belong to no gang and have no
    nomination (those depend on more than their own spec)."""
    if pod.pod_group is not None or pod.nominated_node is not None:
        return None
    return (
        pod.scheduler_name,
        pod.namespace,
        tuple(sorted(pod.requests.items())),
        tuple(sorted(pod.node_selector.items())),
        pod.tolerations,
        repr(pod.affinity),
        pod.priority,
        pod.preemption_policy,
        pod.qos,
        tuple((c.name, tuple(sorted(c.requests.items())), c.init) for c in pod.containers),
        tuple(sorted(pod.labels.items())),
        pod.topology_spread_constraints,
        pod.default_spread_selector,
    )


class Scheduler:
    """Every profile's framework; implements the twin's PlacementPolicy."""

    name = "kube-scheduler"

    def __init__(
        self,
        profiles: Sequence[ProfileConfig] = (),
        *,
        registry: Registry,
        reference: bool = False,
    ) -> None:
        configs = [cfg.with_registry(registry) for cfg in list(profiles) or [ProfileConfig()]]
        check_profiles(configs, registry)
        kind = ReferenceFramework if reference else Framework
        self.frameworks: dict[str, Framework] = {
            cfg.schedulerName: kind(resolve_profile(cfg, registry), registry) for cfg in configs
        }
        self._queue_sort = next(iter(self.frameworks.values())).queue_sort
        # uid -> (the PodInfo the key was made for, its equivalence key); PodInfo is frozen.
        self._keys: dict[str, tuple[PodInfo, _Key | None]] = {}

    def handles(self, scheduler_name: str) -> bool:
        return scheduler_name in self.frameworks

    def queue_sort_key(self, queued: QueuedPodInfo) -> tuple[object, ...]:
        return self._queue_sort.sort_key(queued)

    def decide(self, snapshot: ClusterSnapshot, pending: Sequence[PodInfo]) -> SchedulingDecision:
        st = ClusterState(snapshot)
        out = DecisionBuilder(WriteSink(snapshot.dra))
        for framework in self.frameworks.values():
            framework.start_decision(out.writes)
        self._load(st, out)
        failed: dict[_Key, tuple[int, Unschedulable]] = {}
        for pod in pending:
            fw = self.frameworks.get(pod.scheduler_name)
            if fw is None:
                message = f"profile not found for scheduler name {pod.scheduler_name!r}"
                out.fail(Unschedulable(pod.uid, message))
                continue
            dra = st.snap.dra
            # A pod with DRA claims depends on its claims, not only on its spec.
            key = None if dra is not None and pod.uid in dra.pods else self._key(pod, fw)
            hit = failed.get(key) if key is not None else None
            if hit is not None and hit[0] == st.version:
                prior = hit[1]
                out.fail(Unschedulable(pod.uid, prior.message, prior.diagnosis, error=prior.error))
                continue
            before = len(out.unschedulable)
            no_fit = fw.schedule_one(st, pod, out)
            result, version = (out.unschedulable[before] if no_fit else None), st.version
            self._drain(st, out)
            if key is not None and result is not None and result.nominated_node is None:
                failed[key] = (version, result)
        return out.build(st)

    def _key(self, pod: PodInfo, fw: Framework) -> _Key | None:
        cached = self._keys.get(pod.uid)
        if cached is not None and cached[0] is pod:
            return cached[1]
        if len(self._keys) > 100_000:
            self._keys.clear()
        # A plugin may say that pods placed after a failure can make this pod fit (a pod its
        # required affinity needs appears; the emptiest spreading domain fills): then "room only
        # shrinks" does not hold and an identical pod's failure says nothing.
        helped = any(p.may_fit_after_others(pod) for p in fw.fit_after_others)
        key = None if helped else equivalence_key(pod)
        self._keys[pod.uid] = (pod, key)
        return key

    # ----- pods waiting at Permit -----
    def _load(self, st: ClusterState, out: DecisionBuilder) -> None:
        """Re-assume the snapshot's waiting pods, note nominations, expire finished waits."""
        names = set(st.snap.node_names)
        for nominated in st.snap.nominated:
            if nominated.node in names:
                st.nominate(nominated.pod, st.index_of(nominated.node))
        for held in st.snap.waiting:
            if held.node not in names or held.pod.scheduler_name not in self.frameworks:
                continue
            place = Placement(st.index_of(held.node), held.gpu_ids, held.gpu_share)
            st.assume(held.pod, place)
            st.waiting[held.pod.uid] = Waiting(
                held.pod,
                place,
                held.deadline_s,
                held.plugin,
                held.wait_s,
                {held.plugin},
                CycleState(),
            )
        # Timeouts in deadline order; each one's Unreserve may release its gang first.
        expired = sorted(
            (w.deadline_s, uid) for uid, w in st.waiting.items() if w.deadline_s <= st.now_s
        )
        for _, uid in expired:
            w = st.waiting.get(uid)
            if w is not None:
                waited = go_duration(w.wait_s)
                message = f"rejected due to timeout after waiting {waited} at plugin {w.plugin}"
                st.rejections.append((uid, w.plugin, message))
                self._drain(st, out)

    def _drain(self, st: ClusterState, out: DecisionBuilder) -> None:
        """Release rejected waiting pods (Unreserve may reject their siblings) and bind allowed
        ones, until nothing is left to do."""
        while st.rejections or st.allowed:
            while st.rejections:
                uid, plugin, message = st.rejections.pop(0)
                w = st.waiting.pop(uid, None)
                if w is None:
                    continue
                fw = self.frameworks[w.pod.scheduler_name]
                fw.run_unreserve(w.cs, w.pod, st, w.placement.node)
                st.forget(uid)
                status = Status(Code.UNSCHEDULABLE, (message,), plugin)
                out.fail(one_node_failure(w.pod, st, w.placement.node, status))
            while st.allowed:
                uid = st.allowed.pop(0)
                w = st.waiting.pop(uid, None)
                if w is not None:
                    fw = self.frameworks[w.pod.scheduler_name]
                    fw.bind(w.cs, w.pod, st, w.placement, out)
