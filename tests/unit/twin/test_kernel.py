from __future__ import annotations

import pytest

from gpuplane.core.kernel import EventLoop, Priority, TwinError


def test_same_time_events_run_by_priority_then_fifo() -> None:
    loop = EventLoop()
    seen: list[str] = []
    loop.schedule(5.0, lambda: seen.append("sched"), priority=Priority.SCHEDULER, label="s")
    loop.schedule(5.0, lambda: seen.append("pod-a"), priority=Priority.POD, label="a")
    loop.schedule(5.0, lambda: seen.append("pod-b"), priority=Priority.POD, label="b")
    loop.schedule(1.0, lambda: seen.append("early"), priority=Priority.METRICS, label="e")
    assert loop.run(10.0) == 4
    assert seen == ["early", "pod-a", "pod-b", "sched"]
    assert loop.now_s == 10.0


def test_cancel_and_until() -> None:
    loop = EventLoop()
    seen: list[float] = []
    h = loop.schedule(2.0, lambda: seen.append(2.0), priority=0, label="x")
    loop.schedule(3.0, lambda: seen.append(3.0), priority=0, label="y")
    loop.schedule(30.0, lambda: seen.append(30.0), priority=0, label="z")
    h.cancel()
    loop.run(10.0)
    assert seen == [3.0] and loop.num_pending == 1


def test_no_events_in_the_past_and_failures_abort() -> None:
    loop = EventLoop()
    loop.run(5.0)
    with pytest.raises(TwinError, match="before now"):
        loop.schedule(1.0, lambda: None, priority=0, label="late")

    def boom() -> None:
        raise KeyError("x")

    loop.schedule(6.0, boom, priority=0, label="boom")
    with pytest.raises(TwinError, match=r"'boom' at t=6.000s failed: KeyError"):
        loop.run(7.0)
