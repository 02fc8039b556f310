"""PrioritySort (kube-scheduler: framework/plugins/queuesort/priority_sort.go): higher priority
first, then the pod that entered (or re-entered) the queue earlier."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from gpuplane.scheduler.framework.interfaces import QUEUE_SORT, Handle, QueuedPodInfo


class PrioritySort:
    name: ClassVar[str] = "PrioritySort"
    extension_points: ClassVar[frozenset[str]] = frozenset({QUEUE_SORT})
    unsupported: ClassVar[tuple[str, ...]] = ()

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        pass

    def sort_key(self, queued: QueuedPodInfo) -> tuple[object, ...]:
        return (-queued.pod.priority, queued.timestamp_s)
