"""The scheduling queue (kube-scheduler: pkg/scheduler/backend/queue/scheduling_queue.go).

Three places a pending pod can be:
- activeQ: ready to be tried, popped in the QueueSort plugin's order;
- backoffQ: failed recently and waits out its back-off (podInitialBackoffSeconds doubling per
  attempt up to podMaxBackoffSeconds, counted from the failure);
- unschedulablePods: failed and waits for a cluster event that may help it. An event moves every
  such pod to backoffQ (still backing off) or activeQ; a pod left there longer than
  podMaxInUnschedulablePodsDuration (5 min) is moved anyway. A pod whose attempt failed with an
  error (no plugin rejected it) skips this and backs off at once.

The queue keeps no clock: every call says what time it is. Its owner (the twin's scheduler loop)
decides when to pop, flush and move; QueueingHints are not modelled, so every event moves every
unschedulable pod.
"""

from __future__ import annotations

from collections.abc import Callable

from gpuplane.scheduler.framework.interfaces import QueuedPodInfo
from gpuplane.scheduler.framework.types import PodInfo

SortKey = Callable[[QueuedPodInfo], tuple[object, ...]]

ACTIVE = "active"
BACKOFF = "backoff"
UNSCHEDULABLE = "unschedulable"
IN_FLIGHT = "in-flight"


def backoff_duration(attempts: int, initial_s: float, max_s: float) -> float:
    """calculateBackoffDuration: ``initial`` doubled per attempt after the first, capped."""
    return min(initial_s * 2.0 ** min(max(attempts - 1, 0), 62), max_s)


class SchedulingQueue:
    """Owner of the pending pods' queue state (mutable)."""

    def __init__(
        self,
        sort_key: SortKey,
        *,
        initial_backoff_s: float = 1.0,
        max_backoff_s: float = 10.0,
        max_in_unschedulable_s: float = 300.0,
    ) -> None:
        self.sort_key = sort_key
        self.initial_backoff_s = initial_backoff_s
        self.max_backoff_s = max_backoff_s
        self.max_in_unschedulable_s = max_in_unschedulable_s
        self._pods: dict[str, QueuedPodInfo] = {}
        self._places: dict[str, dict[str, float]] = {
            ACTIVE: {},
            BACKOFF: {},  # uid -> back-off expiry
            UNSCHEDULABLE: {},  # uid -> since
            IN_FLIGHT: {},
        }
        self._where: dict[str, str] = {}
        # Per pod: its QueueSort key (fixed between failures) and when its back-off ends.
        self._order: dict[str, tuple[object, ...]] = {}
        self._expiry: dict[str, float] = {}

    # ----- membership -----
    def __contains__(self, uid: object) -> bool:
        return uid in self._where

    def __len__(self) -> int:
        return len(self._where)

    def where(self, uid: str) -> str | None:
        return self._where.get(uid)

    def count(self, place: str) -> int:
        return len(self._places[place])

    def info(self, uid: str) -> QueuedPodInfo:
        return self._pods[uid]

    def uids(self, place: str) -> list[str]:
        return list(self._places[place])

    def _move(self, uid: str, place: str, value: float = 0.0) -> None:
        old = self._where.get(uid)
        if old is not None:
            del self._places[old][uid]
        self._where[uid] = place
        self._places[place][uid] = value

    def add(self, pod: PodInfo, now_s: float) -> None:
        """A new pending pod goes to activeQ; a known one just gets the new PodInfo."""
        if pod.uid in self._where:
            self.update(pod)
            return
        q = QueuedPodInfo(pod, timestamp_s=now_s, initial_attempt_s=now_s)
        self._pods[pod.uid] = q
        self._order[pod.uid] = (*self.sort_key(q), pod.uid)
        self._move(pod.uid, ACTIVE)

    def update(self, pod: PodInfo) -> None:
        q = self._pods.get(pod.uid)
        if q is not None:
            q.pod = pod
            self._order[pod.uid] = (*self.sort_key(q), pod.uid)

    def delete(self, uid: str) -> None:
        self._pods.pop(uid, None)
        self._order.pop(uid, None)
        self._expiry.pop(uid, None)
        old = self._where.pop(uid, None)
        if old is not None:
            del self._places[old][uid]

    # ----- popping and failing -----
    def backoff_expiry_s(self, uid: str) -> float:
        return self._expiry.get(uid, self._pods[uid].timestamp_s)

    def pop_all(self, now_s: float) -> list[QueuedPodInfo]:
        """Every pod in activeQ (after moving finished back-offs there), in queue order; each
        attempt is counted, and the pods are in flight until ``done`` or ``add_unschedulable``."""
        self.flush_backoff_completed(now_s)
        active, flight = self._places[ACTIVE], self._places[IN_FLIGHT]
        order = self._order
        uids = sorted(active, key=order.__getitem__)
        self._places[ACTIVE] = {}
        out: list[QueuedPodInfo] = []
        for uid in uids:
            q = self._pods[uid]
            q.attempts += 1
            flight[uid] = 0.0
            self._where[uid] = IN_FLIGHT
            out.append(q)
        return out

    def done(self, uid: str) -> None:
        """The pod left the queue: bound, waiting at Permit, or gone."""
        self.delete(uid)

    def add_unschedulable(self, uid: str, now_s: float) -> None:
        """A failed attempt: to unschedulablePods, its back-off counted from now."""
        q = self._pods.get(uid)
        if q is None:
            return
        q.timestamp_s = now_s
        self._order[uid] = (*self.sort_key(q), uid)
        self._expiry[uid] = now_s + backoff_duration(
            q.attempts, self.initial_backoff_s, self.max_backoff_s
        )
        self._move(uid, UNSCHEDULABLE, now_s)

    def add_after_error(self, uid: str, now_s: float) -> None:
        """An attempt that failed with an error, not a rejection: no plugin is waiting for a
        cluster event, so the pod goes to backoffQ and is retried when its back-off ends
        (AddUnschedulableIfNotPresent with no rejector plugins)."""
        q = self._pods.get(uid)
        if q is None:
            return
        self.add_unschedulable(uid, now_s)
        self._to_active_or_backoff(uid, now_s)

    # ----- moves -----
    def _to_active_or_backoff(self, uid: str, now_s: float) -> None:
        expiry = self.backoff_expiry_s(uid)
        if expiry > now_s:
            self._move(uid, BACKOFF, expiry)
        else:
            self._move(uid, ACTIVE)

    def move_all_to_active_or_backoff(self, now_s: float) -> int:
        """A cluster event: every unschedulable pod may fit now. Returns how many moved."""
        moved = self._places[UNSCHEDULABLE]
        self._places[UNSCHEDULABLE] = {}
        active, backoff, where = self._places[ACTIVE], self._places[BACKOFF], self._where
        for uid in moved:
            expiry = self._expiry.get(uid, 0.0)
            if expiry > now_s:
                backoff[uid] = expiry
                where[uid] = BACKOFF
            else:
                active[uid] = 0.0
                where[uid] = ACTIVE
        return len(moved)

    def flush_backoff_completed(self, now_s: float) -> None:
        done = [uid for uid, expiry in self._places[BACKOFF].items() if expiry <= now_s]
        for uid in done:
            self._move(uid, ACTIVE)

    def flush_unschedulable_left_over(self, now_s: float) -> int:
        old = [
            uid
            for uid, since in self._places[UNSCHEDULABLE].items()
            if now_s - since >= self.max_in_unschedulable_s
        ]
        for uid in old:
            self._to_active_or_backoff(uid, now_s)
        return len(old)

    def next_ready_s(self, now_s: float) -> float | None:
        """When the next pop would find a pod: now if activeQ has one, else the first back-off
        to end; None when nothing is active or backing off."""
        if self._places[ACTIVE]:
            return now_s
        ends = self._places[BACKOFF].values()
        return max(now_s, min(ends)) if ends else None
