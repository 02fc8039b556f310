from __future__ import annotations

import pytest

from gpuplane.scheduler.framework.interfaces import QueuedPodInfo
from gpuplane.scheduler.framework.queue import (
    ACTIVE,
    BACKOFF,
    IN_FLIGHT,
    UNSCHEDULABLE,
    SchedulingQueue,
    backoff_duration,
)
from tests.unit.scheduler.factories import GPUPLANE, make_pod, make_scheduler


def priority_sort(q: QueuedPodInfo) -> tuple[object, ...]:
    return (-q.pod.priority, q.timestamp_s)


def test_active_queue_pops_by_priority_then_time() -> None:
    q = SchedulingQueue(priority_sort)
    q.add(make_pod("old"), 0.0)
    q.add(make_pod("new"), 5.0)
    q.add(make_pod("vip", prio=100), 9.0)
    popped = q.pop_all(10.0)
    assert [p.pod.uid for p in popped] == ["vip", "old", "new"]
    assert all(p.attempts == 1 for p in popped)
    assert q.where("old") == IN_FLIGHT and q.count(ACTIVE) == 0


@pytest.mark.parametrize(
    ("attempts", "expected"), [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (30, 10.0)]
)
def test_backoff_doubles_to_the_cap(attempts: int, expected: float) -> None:
    assert backoff_duration(attempts, 1.0, 10.0) == expected


def test_unschedulable_pods_wait_for_an_event_then_back_off() -> None:
    q = SchedulingQueue(priority_sort)
    q.add(make_pod("a"), 0.0)
    q.pop_all(0.0)
    q.add_unschedulable("a", 0.0)
    assert q.where("a") == UNSCHEDULABLE
    assert q.next_ready_s(0.5) is None  # nothing to do until an event
    q.move_all_to_active_or_backoff(0.5)  # still backing off (1 s from the failure)
    assert q.where("a") == BACKOFF and q.next_ready_s(0.5) == 1.0
    assert q.pop_all(0.9) == []
    assert [p.pod.uid for p in q.pop_all(1.0)] == ["a"]
    q.add_unschedulable("a", 1.0)  # second failure: 2 s back-off
    assert q.backoff_expiry_s("a") == 3.0
    q.move_all_to_active_or_backoff(5.0)
    assert q.where("a") == ACTIVE


def test_a_pod_whose_attempt_erred_backs_off_without_waiting_for_an_event() -> None:
    q = SchedulingQueue(priority_sort)
    q.add(make_pod("a"), 0.0)
    q.pop_all(0.0)
    q.add_after_error("a", 0.0)
    assert q.where("a") == BACKOFF and q.next_ready_s(0.5) == 1.0
    assert [p.pod.uid for p in q.pop_all(1.0)] == ["a"]
    q.add_after_error("a", 1.0)  # second failure: 2 s back-off
    assert q.where("a") == BACKOFF and q.backoff_expiry_s("a") == 3.0
    q.add_after_error("gone", 1.0)  # a pod the queue does not hold is ignored
    assert "gone" not in q


def test_left_over_unschedulable_pods_are_flushed_after_five_minutes() -> None:
    q = SchedulingQueue(priority_sort)
    q.add(make_pod("a"), 0.0)
    q.pop_all(0.0)
    q.add_unschedulable("a", 0.0)
    assert q.flush_unschedulable_left_over(299.0) == 0
    assert q.flush_unschedulable_left_over(300.0) == 1
    assert q.where("a") == ACTIVE


def test_delete_and_done_forget_the_pod() -> None:
    q = SchedulingQueue(priority_sort)
    q.add(make_pod("a"), 0.0)
    q.add(make_pod("b"), 0.0)
    q.delete("a")
    (b,) = q.pop_all(0.0)
    q.done(b.pod.uid)
    assert len(q) == 0 and "a" not in q


def test_coscheduling_sort_keeps_a_gang_together() -> None:
    key = make_scheduler([GPUPLANE]).queue_sort_key
    q = SchedulingQueue(key)
    q.add(make_pod("solo-early"), 0.0)
    q.add(make_pod("g-1", group="g", group_created_s=1.0), 5.0)
    q.add(make_pod("solo-late"), 3.0)
    q.add(make_pod("g-0", group="g", group_created_s=1.0), 7.0)
    order = [p.pod.uid for p in q.pop_all(10.0)]
    assert order == ["solo-early", "g-0", "g-1", "solo-late"]


def test_priority_sort_plugin_orders_by_priority_then_queue_time() -> None:
    from gpuplane.scheduler.framework.config import ProfileConfig

    cfg = ProfileConfig.model_validate(
        {
            "plugins": {
                "multiPoint": {"enabled": [{"name": "PrioritySort"}]},
            }
        }
    )
    q = SchedulingQueue(make_scheduler([cfg]).queue_sort_key)
    q.add(make_pod("late", t=0.0), 5.0)
    q.add(make_pod("early", t=9.0), 1.0)  # created later, queued earlier
    q.add(make_pod("vip", prio=10), 9.0)
    assert [p.pod.uid for p in q.pop_all(10.0)] == ["vip", "early", "late"]
    q.add_unschedulable("early", 20.0)  # a failure re-stamps it: it now sorts last
    q.add(make_pod("new"), 15.0)
    q.move_all_to_active_or_backoff(30.0)
    assert [p.pod.uid for p in q.pop_all(30.0)] == ["new", "early"]
