"""Coscheduling (kubernetes-sigs/scheduler-plugins: pkg/coscheduling/coscheduling.go and
core/core.go): a PodGroup's pods run all together or not at all.

- QueueSort: priority, then the PodGroup's creation time (a pod without a group: when it first
  entered the queue), then namespace/name, so a gang's members are tried back to back.
- PreFilter: fewer than ``minMember`` member pods exist -> ``pre-filter pod <name> cannot find
  enough sibling pods, current pods number: <n>, minMember of group: <m>``, unresolvable so no
  preemption is tried for it.
- Permit: once ``minMember`` members have a node (bound, or waiting here) the pod and every
  waiting sibling are allowed; before that the pod waits, holding its reservation, for the
  group's ``scheduleTimeoutSeconds`` (else ``permitWaitingTimeSeconds``, 60). A timeout rejects
  it and its Unreserve rejects every waiting sibling ("rejection in Unreserve"): never a partial
  gang.
- PostFilter: a member that fits nowhere rejects its waiting siblings ("optimistic rejection in
  PostFilter") unless the group already has enough members or misses at most 10% of them; a pod
  without a group answers ``can not find pod group``.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from gpuplane.scheduler.framework.explain import Diagnosis
from gpuplane.scheduler.framework.interfaces import (
    PERMIT,
    POST_FILTER,
    PRE_FILTER,
    QUEUE_SORT,
    RESERVE,
    Handle,
    PostFilterResult,
    QueuedPodInfo,
)
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.status import (
    SUCCESS,
    Code,
    Status,
    unresolvable,
    unschedulable,
    wait,
)
from gpuplane.scheduler.framework.types import PodInfo

POSTFILTER_REJECTION = "optimistic rejection in PostFilter"
UNRESERVE_REJECTION = "rejection in Unreserve"


class CoschedulingArgs(BaseModel):
    """scheduler-plugins CoschedulingArgs (the fields modelled)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    permitWaitingTimeSeconds: int = Field(default=60, ge=1)
    podGroupBackoffSeconds: int = Field(
        default=0, ge=0, le=0, description="Back-off of a failed group: not modelled (0 only)."
    )


class Coscheduling:
    name: ClassVar[str] = "Coscheduling"
    extension_points: ClassVar[frozenset[str]] = frozenset(
        {QUEUE_SORT, PRE_FILTER, POST_FILTER, PERMIT, RESERVE}
    )
    unsupported: ClassVar[tuple[str, ...]] = (
        "PodGroup minResources (the cluster-wide resource pre-check)",
        "podGroupBackoffSeconds",
    )

    def __init__(self, args: CoschedulingArgs | None, handle: Handle) -> None:
        self.args = args or CoschedulingArgs()
        self.handle = handle

    def sort_key(self, queued: QueuedPodInfo) -> tuple[object, ...]:
        pod = queued.pod
        created = pod.group_created_s if pod.pod_group is not None else None
        when = created if created is not None else queued.initial_attempt_s
        return (-pod.priority, when, pod.key)

    def pre_filter(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> Status:
        group = pod.group_key
        info = st.snap.pod_groups.get(group) if group is not None else None
        if info is None:
            return SUCCESS  # not a gang, or its PodGroup is missing (Permit rejects those)
        if info.num_pods < info.min_member:
            return unresolvable(
                f"pre-filter pod {pod.name} cannot find enough sibling pods, current pods "
                f"number: {info.num_pods}, minMember of group: {info.min_member}"
            )
        return SUCCESS

    def _reject_siblings(self, st: ClusterState, group: str, message: str) -> None:
        for uid in st.waiting_in_group(group):
            self.handle.reject_waiting(st, uid, self.name, message)

    def post_filter(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, diagnosis: Diagnosis
    ) -> PostFilterResult:
        group = pod.group_key
        info = st.snap.pod_groups.get(group) if group is not None else None
        if group is None or info is None:
            return PostFilterResult(unschedulable("can not find pod group"))
        assigned = st.assigned_in_group(group, pod.uid)
        missing = (info.min_member - assigned) / info.min_member
        if assigned >= info.min_member or missing <= 0.1:
            return PostFilterResult(unschedulable())
        self._reject_siblings(st, group, POSTFILTER_REJECTION)
        return PostFilterResult(
            unschedulable(
                f"PodGroup {group} gets rejected due to Pod {pod.name} is unschedulable even "
                "after PostFilter"
            )
        )

    def permit(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> Status:
        group = pod.group_key
        if group is None:
            return SUCCESS
        info = st.snap.pod_groups.get(group)
        if info is None:
            return unschedulable("PodGroup not found")
        if st.assigned_in_group(group, pod.uid) + 1 >= info.min_member:
            for uid in st.waiting_in_group(group):
                self.handle.allow_waiting(st, uid, self.name)
            return SUCCESS
        timeout = info.schedule_timeout_s or float(self.args.permitWaitingTimeSeconds)
        return wait(timeout, self.name)

    def reserve(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> Status:
        return Status(Code.SUCCESS)

    def unreserve(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> None:
        group = pod.group_key
        if group is not None and group in st.snap.pod_groups:
            self._reject_siblings(st, group, UNRESERVE_REJECTION)
