"""The placement seam: what the twin asks of a scheduler, and what it gets back.

The twin's scheduler is ``gpuplane.scheduler.framework.Scheduler`` (kube-scheduler's framework
with the profiles the scenario configures). Anything with the same four members can replace it:
a name, whether it schedules pods of a given ``schedulerName``, the queue order, and the pure
``decide(snapshot, pending) -> SchedulingDecision``; the twin applies the decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from gpuplane.scheduler.framework.decision import Binding, SchedulingDecision, Unschedulable
from gpuplane.scheduler.framework.explain import fit_error
from gpuplane.scheduler.framework.interfaces import QueuedPodInfo
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.types import PodInfo


class PlacementPolicy(Protocol):
    name: str

    def handles(self, scheduler_name: str) -> bool: ...

    def queue_sort_key(self, queued: QueuedPodInfo) -> tuple[object, ...]: ...

    def decide(
        self, snapshot: ClusterSnapshot, pending: Sequence[PodInfo]
    ) -> SchedulingDecision: ...


__all__ = [
    "Binding",
    "ClusterSnapshot",
    "PlacementPolicy",
    "PodInfo",
    "SchedulingDecision",
    "Unschedulable",
    "fit_error",
]
