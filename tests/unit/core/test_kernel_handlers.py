"""The kernel's cheap events (``post``) share the heap order with scheduled ones."""

from __future__ import annotations

import math

import pytest

from gpuplane.core.kernel import EventLoop, TwinError


def test_posted_and_scheduled_events_run_in_one_order() -> None:
    loop = EventLoop()
    seen: list[str] = []
    loop.post(5.0, 30, seen.append, "post-30")
    loop.schedule(5.0, lambda: seen.append("sched-10"), priority=10, label="s")
    loop.post(5.0, 10, seen.append, "post-10")
    loop.post(1.0, 90, seen.append, "early")
    handle = loop.schedule(2.0, lambda: seen.append("cancelled"), priority=0, label="c")
    handle.cancel()
    assert loop.run_handlers(10.0) == 4
    assert seen == ["early", "sched-10", "post-10", "post-30"]
    assert loop.now_s == 10.0


def test_settle_runs_once_an_instant_has_changed_before_its_reactions() -> None:
    loop = EventLoop()
    seen: list[str] = []
    for t, prio, name in [(1.0, 0, "a"), (1.0, 5, "b"), (1.0, 30, "c"), (2.0, 0, "d")]:
        loop.post(t, prio, seen.append, name)
    loop.run_handlers(math.inf, lambda: seen.append("|"), settle_priority=30)
    # Not between a and b (same time, below 30); before c (priority 30) and after each time.
    assert seen == ["a", "b", "|", "c", "|", "d", "|"]
    assert loop.now_s == 2.0  # an infinite end leaves time at the last event


def test_handler_errors_pass_through_run_handlers_and_are_wrapped_by_run() -> None:
    def fail(_: None) -> None:
        raise ValueError("boom")

    loop = EventLoop()
    loop.post(1.0, 0, fail, None)
    with pytest.raises(ValueError, match="boom"):
        loop.run_handlers(5.0)
    loop.post(2.0, 0, fail, None)
    with pytest.raises(TwinError, match="boom"):
        loop.run(5.0)


def test_settle_is_skipped_while_its_pending_collection_is_empty() -> None:
    loop = EventLoop()
    dirty: set[str] = set()
    seen: list[str] = []

    def mark(name: str) -> None:
        seen.append(name)
        if name.startswith("x"):
            dirty.add(name)

    def settle() -> None:
        seen.append(f"|{sorted(dirty)}")
        dirty.clear()

    for t, name in [(1.0, "a"), (2.0, "x1"), (3.0, "b"), (4.0, "x2")]:
        loop.post(t, 0, mark, name)
    assert loop.run_handlers(math.inf, settle, pending=dirty) == 4
    # Settle ran only after the events that left something pending.
    assert seen == ["a", "x1", "|['x1']", "b", "x2", "|['x2']"]
