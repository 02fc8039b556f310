"""What a scheduling decision says, for the caller (the twin, or a live adapter) to apply: the
bindings, the pods left unschedulable or waiting at Permit, the preemptions, and the writes the
plugins recorded for the bound pods (``writes``); nothing of it is applied inside ``decide``."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuplane.scheduler.framework.explain import Diagnosis
from gpuplane.scheduler.framework.state import ClusterState, Placement
from gpuplane.scheduler.framework.types import GpuShare, PodInfo, WaitingPod
from gpuplane.scheduler.framework.writes import DecisionWrites, WriteSink


@dataclass(frozen=True, slots=True)
class Binding:
    """Bind the pod to ``node`` with these devices (the binding cycle succeeded)."""

    pod_uid: str
    node: str
    gpu_ids: tuple[int, ...] = ()
    gpu_share: GpuShare | None = None


@dataclass(frozen=True, slots=True)
class Unschedulable:
    """The pod did not get a node this time. ``message`` is the FailedScheduling event text;
    ``diagnosis`` holds the per-node, per-plugin reasons behind it."""

    pod_uid: str
    message: str
    diagnosis: Diagnosis | None = None
    # Preemption made room on this node: the pod's status.nominatedNodeName.
    nominated_node: str | None = None
    # The pod's nominatedNodeName is cleared (preemption found nothing to do).
    clear_nomination: bool = False
    # The attempt failed with an Error status (a plugin's error, not a rejection): kube sets the
    # PodScheduled reason SchedulerError and retries the pod after its back-off instead of
    # waiting in unschedulablePods for a cluster event.
    error: bool = False


@dataclass(frozen=True, slots=True)
class Preemption:
    """Evict ``victims`` (uids) from ``node`` so that ``preemptor_uid`` fits there later."""

    preemptor_uid: str
    node: str
    victims: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SchedulingDecision:
    bindings: tuple[Binding, ...] = ()
    unschedulable: tuple[Unschedulable, ...] = ()
    # Every pod waiting at Permit after this decision (it keeps its reservation).
    waiting: tuple[WaitingPod, ...] = ()
    preemptions: tuple[Preemption, ...] = ()
    # Pods whose nominatedNodeName is cleared (a higher-priority pod took their node).
    cleared_nominations: tuple[str, ...] = ()
    next_start_index: int = 0
    # What the plugins wrote for the pods bound (claim statuses) and the allocations in flight:
    # applied by the caller together with ``bindings``, never before.
    writes: DecisionWrites = field(default_factory=DecisionWrites)


class DecisionBuilder:
    """Collects a decision's parts while the cycles run (owner of the lists and the sink)."""

    def __init__(self, writes: WriteSink | None = None) -> None:
        self.writes = writes if writes is not None else WriteSink()
        self.bindings: list[Binding] = []
        self.unschedulable: list[Unschedulable] = []
        self.preemptions: list[Preemption] = []
        self.cleared: list[str] = []

    def bind(self, pod: PodInfo, node: str, place: Placement) -> None:
        self.bindings.append(Binding(pod.uid, node, place.gpu_ids, place.share))

    def fail(self, failure: Unschedulable) -> None:
        self.unschedulable.append(failure)

    def build(self, st: ClusterState) -> SchedulingDecision:
        waiting = tuple(
            WaitingPod(
                pod=w.pod,
                node=st.name_of(w.placement.node),
                deadline_s=w.deadline_s,
                plugin=w.plugin,
                gpu_ids=w.placement.gpu_ids,
                gpu_share=w.placement.share,
                wait_s=w.wait_s,
            )
            for w in st.waiting.values()
        )
        return SchedulingDecision(
            bindings=tuple(self.bindings),
            unschedulable=tuple(self.unschedulable),
            waiting=waiting,
            preemptions=tuple(self.preemptions),
            cleared_nominations=tuple(self.cleared),
            next_start_index=st.next_start,
            writes=self.writes.build(),
        )
