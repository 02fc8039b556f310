"""The scheduling queue and cycle around a placement policy (kube-scheduler's SchedulingQueue).

- New pods enter the active queue; a cycle runs at the instant anything is queued.
- A pod that does not fit moves to the unschedulable set with a back-off (1 s doubling to 10 s
  per attempt). Cluster events that can make room (a pod ends, a node changes) move every
  unschedulable pod back to the active queue once its back-off has passed; pods that stay
  unschedulable for 5 minutes are flushed back anyway (checked every 30 s).
- ``FailedScheduling`` events are recorded when a pod's message changes, not on every retry,
  the way the event recorder's aggregation collapses repeats.
- Bindings pick the lowest free GPU indices on the chosen node (the device plugin's plain
  choice); topology-aware GPU selection comes with the kubelet issue.
"""

from __future__ import annotations

from gpuplane.twin.cluster import Cluster
from gpuplane.twin.kernel import EventHandle, Priority
from gpuplane.twin.kubelet_sim import KubeletSim
from gpuplane.twin.objects import Pod
from gpuplane.twin.placement import (
    ClusterSnapshot,
    NodeView,
    PendingPod,
    PlacementPolicy,
)
from gpuplane.twin.spec import GPU
from gpuplane.twin.store import CORE


class SchedulerLoop:
    def __init__(self, cluster: Cluster, policy: PlacementPolicy, kubelet: KubeletSim) -> None:
        self.c = cluster
        self.policy = policy
        self.kubelet = kubelet
        self.active: set[str] = set()
        self.unschedulable: dict[str, float] = {}  # uid -> time it became unschedulable
        self._cycle: EventHandle | None = None
        self._flush: EventHandle | None = None
        self._views: tuple[int, tuple[NodeView, ...]] | None = None
        cluster.on_pod_change.append(self._on_pod)
        cluster.on_cluster_change.append(self._on_cluster_change)

    # ----- queue -----
    def _on_pod(self, pod: Pod) -> None:
        if pod.node_name is None and pod.is_active:
            if pod.template.scheduler_name != self.c.settings.scheduler_name:
                return  # another scheduler's pod: it stays Pending here
            if pod.uid not in self.unschedulable:
                self.active.add(pod.uid)
                self._request(self.c.now)
        else:
            self.active.discard(pod.uid)
            self.unschedulable.pop(pod.uid, None)

    def _on_cluster_change(self) -> None:
        if not self.unschedulable:
            return
        earliest = None
        for uid in self.unschedulable:
            self.active.add(uid)
            t = max(self.c.now, self.c.store.pods[uid].backoff_until_s)
            earliest = t if earliest is None else min(earliest, t)
        self.unschedulable.clear()
        if earliest is not None:
            self._request(earliest)

    def _request(self, t_s: float) -> None:
        if self._cycle is not None and not self._cycle.cancelled and self._cycle.t_s <= t_s:
            return
        if self._cycle is not None:
            self._cycle.cancel()
        self._cycle = self.c.loop.schedule(
            t_s, self._run_cycle, priority=Priority.SCHEDULER, label="scheduling cycle"
        )

    # ----- cycle -----
    def _run_cycle(self) -> None:
        self._cycle = None
        now = self.c.now
        pods = self.c.store.pods
        ready = [pods[u] for u in sorted(self.active) if pods[u].backoff_until_s <= now]
        later = [pods[u].backoff_until_s for u in self.active if pods[u].backoff_until_s > now]
        if later:
            self._request(min(later))
        if not ready:
            return
        decision = self.policy.decide(self._snapshot(ready), [self._view(p) for p in ready])
        for binding in decision.bindings:
            self._bind(pods[binding.pod_uid], binding.node)
        for failure in decision.unschedulable:
            self._unschedulable(pods[failure.pod_uid], failure.message)
        self.c.count("scheduling_cycles")

    def _bind(self, pod: Pod, node_name: str) -> None:
        node = self.c.store.nodes[node_name]
        n = pod.requests.get(GPU, 0)
        gpu_ids = tuple(node.free_gpu_ids()[:n])
        self.c.store.bind(pod, node, gpu_ids, self.c.now)
        self.active.discard(pod.uid)
        pod.last_schedule_message = None
        self.c.count("pods_bound")
        self.kubelet.on_bound(pod)
        self.c.pod_changed(pod)

    def _unschedulable(self, pod: Pod, message: str) -> None:
        pod.schedule_attempts += 1
        s = self.c.settings
        back_off = min(
            s.pod_initial_backoff_s * 2.0 ** min(pod.schedule_attempts - 1, 30), s.pod_max_backoff_s
        )
        pod.backoff_until_s = self.c.now + back_off
        self.active.discard(pod.uid)
        self.unschedulable[pod.uid] = self.c.now
        pod.conditions["PodScheduled"] = False
        if message != pod.last_schedule_message:
            pod.last_schedule_message = message
            self.c.emit(
                "Pod", pod.name, "FailedScheduling", message, namespace=pod.namespace, warning=True
            )
        self._arm_flush()

    def _arm_flush(self) -> None:
        if self._flush is not None and not self._flush.cancelled:
            return
        self._flush = self.c.loop.after(
            self.c.settings.unschedulable_flush_check_s,
            self._flush_old,
            priority=Priority.SCHEDULER,
            label="flush unschedulable",
        )

    def _flush_old(self) -> None:
        self._flush = None
        cutoff = self.c.now - self.c.settings.unschedulable_flush_s
        old = [u for u, since in self.unschedulable.items() if since <= cutoff]
        for uid in old:
            del self.unschedulable[uid]
            self.active.add(uid)
        if old:
            self._request(self.c.now)
        if self.unschedulable:
            self._arm_flush()

    # ----- snapshot -----
    def _snapshot(self, ready: list[Pod]) -> ClusterSnapshot:
        store = self.c.store
        needs_other = any(k not in CORE for p in ready for k in p.requests)
        if needs_other or self._views is None or self._views[0] != self.c.generation:
            views = tuple(
                NodeView(
                    name=n.name,
                    labels=dict(n.labels),
                    taints=tuple(n.taints),
                    unschedulable=n.unschedulable,
                    ready=n.ready and not n.lost,
                    free_other={k: v for k, v in store.node_free(n).items() if k not in CORE}
                    if needs_other
                    else {},
                )
                for n in (store.nodes[name] for name in store.node_order)
            )
            self._views = (self.c.generation, views)
        groups = self._pod_groups() if any(p.pod_group for p in ready) else {}
        return ClusterSnapshot(
            nodes=self._views[1],
            free={k: v.copy() for k, v in store.free.items()},
            schedulable=store.schedulable.copy(),
            pod_groups=groups,
            generation=self.c.generation,
        )

    def _pod_groups(self) -> dict[str, tuple[int, int]]:
        """Per PodGroup: minMember and how many member pods are assigned to a node.

        As coscheduling counts them (CalculateAssignedPods over the pod lister): every pod of
        the group that still exists and has a node, whatever its phase.
        """
        store = self.c.store
        assigned: dict[tuple[str, str], int] = {}
        for p in store.pods.values():
            if p.pod_group is not None and p.node_name is not None and not p.is_deleted:
                key = (p.namespace, p.pod_group)
                assigned[key] = assigned.get(key, 0) + 1
        return {
            g.name: (g.min_member, assigned.get((g.namespace, g.name), 0))
            for g in store.pod_groups.values()
        }

    @staticmethod
    def _view(pod: Pod) -> PendingPod:
        t = pod.template
        return PendingPod(
            uid=pod.uid,
            key=pod.key,
            requests=pod.requests,
            priority=t.priority,
            created_s=pod.created_s,
            node_selector=t.node_selector,
            tolerations=t.tolerations,
            affinity=t.affinity,
            pod_group=pod.pod_group,
        )
