"""The twin's kube-scheduler process: the scheduling queue fed by cluster events, scheduling
cycles, and the application of each decision (the plugins' writes it carries, bindings, pods
waiting at Permit, preemptions).

- New pods whose ``schedulerName`` a profile serves enter the framework's ``SchedulingQueue``; a
  cycle runs at the instant anything is ready. One cycle hands every ready pod, in queue order,
  to ``decide``, which schedules them one after the other as kube-scheduler's cycles would.
- A pod that does not fit goes to unschedulablePods with its back-off (1 s doubling to 10 s).
  Cluster events that may make room (a pod ends, a node changes) move them to backoffQ or
  activeQ; pods left unschedulable for 5 minutes are moved anyway (checked every 30 s). A pod
  whose attempt failed with an error (a plugin's Error status, e.g. a DRA allocator error) goes
  to backoffQ and is retried when its back-off ends; its PodScheduled reason is SchedulerError.
- Pods waiting at Permit (gangs) hold their reservation inside the scheduler between cycles and
  stay in flight; a cycle runs when the first wait times out.
- Preemption: victims are deleted at once (no termination grace period in the twin), their
  controllers replace them, the preemptor gets ``nominatedNodeName``.
- ``FailedScheduling`` events are recorded when a pod's message changes, not on every retry,
  the way the event recorder's aggregation collapses repeats.
"""

from __future__ import annotations

from gpuplane.core.kernel import EventHandle, Priority
from gpuplane.scheduler.framework.decision import (
    Binding,
    Preemption,
    SchedulingDecision,
    Unschedulable,
)
from gpuplane.scheduler.framework.queue import SchedulingQueue
from gpuplane.scheduler.framework.types import NominatedPod, WaitingPod
from gpuplane.scheduler.framework.writes import DecisionWrites
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.objects import Pod
from gpuplane.twin.component import Component
from gpuplane.twin.kubelet.gpu_devices import dra_fraction, gpu_fraction
from gpuplane.twin.kubelet.simulator import KubeletSim
from gpuplane.twin.scheduling.placement import PlacementPolicy
from gpuplane.twin.scheduling.snapshot import SnapshotBuilder


class SchedulerLoop(Component):
    def __init__(self, cluster: Cluster, policy: PlacementPolicy, kubelet: KubeletSim) -> None:
        self.c = cluster
        self.policy = policy
        self.kubelet = kubelet
        s = cluster.settings
        self.queue = SchedulingQueue(
            policy.queue_sort_key,
            initial_backoff_s=s.pod_initial_backoff_s,
            max_backoff_s=s.pod_max_backoff_s,
            max_in_unschedulable_s=s.unschedulable_flush_s,
        )
        self.snapshots = SnapshotBuilder(cluster)
        self.waiting: dict[str, WaitingPod] = {}
        self.nominated: dict[str, str] = {}  # pod uid -> node (the queue's nominator)
        self.next_start_index = 0
        self._cycle: EventHandle | None = None
        self._flush: EventHandle | None = None
        cluster.on_pod_change.append(self._on_pod)
        cluster.on_cluster_change.append(self._on_cluster_change)

    # ----- events -----
    def _on_pod(self, pod: Pod) -> None:
        self.snapshots.on_pod(pod)
        if pod.node_name is None and pod.is_active:
            if pod.uid in self.queue or not self.policy.handles(pod.template.scheduler_name):
                return  # already queued, or another scheduler's pod: it stays Pending here
            self.queue.add(self.snapshots.pod_info(pod), self.c.now)
            self._request(self.c.now)
            return
        self.queue.delete(pod.uid)
        self.nominated.pop(pod.uid, None)
        if self.waiting.pop(pod.uid, None) is not None:
            self._request(self.c.now)  # its reservation is gone: let the scheduler see it

    def _on_cluster_change(self) -> None:
        if self.queue.move_all_to_active_or_backoff(self.c.now):
            self._rearm()

    def _request(self, t_s: float) -> None:
        if self._cycle is not None and not self._cycle.cancelled and self._cycle.t_s <= t_s:
            return
        if self._cycle is not None:
            self._cycle.cancel()
        self._cycle = self.c.loop.schedule(
            t_s, self._run_cycle, priority=Priority.SCHEDULER, label="scheduling cycle"
        )

    def _rearm(self) -> None:
        now = self.c.now
        times = [w.deadline_s for w in self.waiting.values()]
        ready = self.queue.next_ready_s(now)
        if ready is not None:
            times.append(ready)
        if times:
            self._request(max(now, min(times)))

    # ----- cycle -----
    def _run_cycle(self) -> None:
        self._cycle = None
        now = self.c.now
        popped = self.queue.pop_all(now)
        expired = any(w.deadline_s <= now for w in self.waiting.values())
        if popped or expired:
            pending = [q.pod for q in popped]
            nominated = [
                NominatedPod(self.queue.info(uid).pod, node)
                for uid, node in self.nominated.items()
                if uid in self.queue
            ]
            snapshot = self.snapshots.build(
                pending,
                waiting=tuple(self.waiting.values()),
                nominated=nominated,
                next_start_index=self.next_start_index,
            )
            decision = self.policy.decide(snapshot, pending)
            self._apply(decision)
            self.c.count("scheduling_cycles")
        self._rearm()

    def _apply_writes(self, writes: DecisionWrites) -> None:
        """The plugins' writes (claim allocation and reservedFor, by PreBind; allocations in
        flight), before the bindings, as the API server has them when the pod binds."""
        dra = self.c.dra
        if dra is not None and writes.pending_allocations is not None:
            dra.apply(writes.claim_statuses, writes.pending_allocations)

    def _apply(self, decision: SchedulingDecision) -> None:
        self._apply_writes(decision.writes)
        before = self.waiting
        self.waiting = {w.pod.uid: w for w in decision.waiting}
        bound = {b.pod_uid for b in decision.bindings}
        released = [uid for uid in before if uid not in self.waiting and uid not in bound]
        for binding in decision.bindings:
            self._bind(binding)
        if released:
            # Reservations given back: older unschedulable pods may fit (kube-scheduler moves
            # them on AssignedPodDelete, not the rejected pods themselves).
            self.queue.move_all_to_active_or_backoff(self.c.now)
        for failure in decision.unschedulable:
            self._unschedulable(failure)
        if decision.unschedulable:
            self._arm_flush()
        for uid in decision.cleared_nominations:
            self._nominate(uid, None)
        for preemption in decision.preemptions:
            self._preempt(preemption)
        self.next_start_index = decision.next_start_index

    # ----- applying -----
    def _bind(self, b: Binding) -> None:
        store = self.c.store
        pod, node = store.pods[b.pod_uid], store.nodes[b.node]
        share = (b.gpu_share.gpu, b.gpu_share.milli) if b.gpu_share is not None else None
        dra = self.c.dra
        dra_devices = (
            tuple(d for _, d in dra.gpus_of(pod))
            if dra is not None and pod.template.resource_claims
            else ()
        )
        alloc = self.kubelet.admission.at_bind(node, pod, share, dra_devices)
        try:
            store.bind(
                pod, node, alloc.gpu_ids, self.c.now, alloc.gpu_share, dict(alloc.ext_devices)
            )
        except ValueError as err:  # a device failed since the reservation was made
            self.queue.add_unschedulable(pod.uid, self.c.now)
            self._event(pod, f"0/1 nodes are available: 1 binding rejected: {err}.")
            self._arm_flush()
            return
        self.queue.done(pod.uid)
        self._nominate(pod.uid, None)
        pod.last_schedule_message = None
        pod.scheduled_reason = None
        self.c.count("pods_bound")
        if dra is not None and pod.template.resource_claims:
            pod.dra_devices = alloc.dra_devices
        pod.gpu_fraction = gpu_fraction(node, pod.gpu_ids, pod.ext_device_ids) + dra_fraction(
            pod.dra_devices
        )
        self.kubelet.on_bound(pod, alloc)
        self.c.pod_changed(pod)

    def _unschedulable(self, failure: Unschedulable) -> None:
        pod = self.c.store.pods[failure.pod_uid]
        if pod.node_name is not None or not pod.is_active:
            return
        if failure.error:
            self.queue.add_after_error(pod.uid, self.c.now)
        else:
            self.queue.add_unschedulable(pod.uid, self.c.now)
        pod.schedule_attempts += 1
        pod.backoff_until_s = self.queue.backoff_expiry_s(pod.uid)
        pod.conditions["PodScheduled"] = False
        pod.scheduled_reason = "SchedulerError" if failure.error else "Unschedulable"
        if failure.nominated_node is not None:
            self._nominate(pod.uid, failure.nominated_node)
        elif failure.clear_nomination and pod.nominated_node_name is not None:
            self._nominate(pod.uid, None)
        if failure.message != pod.last_schedule_message:
            self._event(pod, failure.message)

    def _event(self, pod: Pod, message: str) -> None:
        if message != pod.last_schedule_message:
            pod.last_schedule_message = message
            self.c.emit(
                "Pod", pod.name, "FailedScheduling", message, namespace=pod.namespace, warning=True
            )

    def _nominate(self, uid: str, node: str | None) -> None:
        pod = self.c.store.pods[uid]
        if pod.nominated_node_name == node:
            return
        pod.nominated_node_name = node
        if node is None:
            self.nominated.pop(uid, None)
        else:
            self.nominated[uid] = node
        if uid in self.queue:
            self.queue.update(self.snapshots.pod_info(pod))

    def _preempt(self, p: Preemption) -> None:
        """Evict the victims; their controllers create replacements (DefaultPreemption's
        prepareCandidate deletes them; the twin has no grace period)."""
        for uid in p.victims:
            victim = self.c.store.pods[uid]
            if victim.is_active:
                self.c.count("preemption_victims")
                self.kubelet.delete(
                    victim, "Preempted", f"Preempted by pod {p.preemptor_uid} on node {p.node}"
                )

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
        if self.queue.flush_unschedulable_left_over(self.c.now):
            self._rearm()
        if self.queue.count("unschedulable"):
            self._arm_flush()
