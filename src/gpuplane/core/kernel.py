"""The discrete-event kernel: a heap of (time, priority, seq) and the callbacks to run.

Same-time events run in priority order (lower first), then in the order they were scheduled, so
a run is fully determined by its inputs and seed. A callback that raises aborts the run with the
event's label and time attached (DESIGN.md: a failed event aborts the run unless handled).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sized
from dataclasses import dataclass
from enum import IntEnum
from heapq import heappush as _heappush
from typing import Any, TypeVar

from gpuplane.core.errors import GpuplaneError


class Priority(IntEnum):
    """Order of same-time events: the world changes first, observers last."""

    FAULT = 0  # hardware and node faults
    NODE = 10  # node lifecycle (GPU Operator components)
    POD = 20  # kubelet: pod start / finish / restart
    CONTROLLER = 30  # workload controllers reconcile
    ARRIVAL = 40  # new objects created by the scenario
    SCHEDULER = 50  # scheduling cycle sees everything that happened at this instant
    OPERATOR = 60  # upgrade controller reconcile
    METRICS = 90  # sampling


class TwinError(GpuplaneError):
    """An event handler failed: the run cannot continue."""


@dataclass(slots=True)
class EventHandle:
    t_s: float
    label: str
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


# (time, priority, seq, callback, handle or argument): a scheduled event's callback takes no
# argument and the entry ends with its handle; a posted event's handler takes the argument.
_Entry = tuple[float, int, int, Callable[..., None], Any]
A = TypeVar("A")


class EventLoop:
    """Owner of simulated time. ``schedule`` never runs anything in the past."""

    def __init__(self) -> None:
        self._heap: list[_Entry] = []
        self._seq = 0
        self.now_s = 0.0
        self.num_processed = 0

    def schedule(
        self, t_s: float, fn: Callable[[], None], *, priority: int, label: str
    ) -> EventHandle:
        if t_s < self.now_s:
            raise TwinError(f"event {label!r} scheduled at {t_s} s, before now ({self.now_s} s)")
        handle = EventHandle(t_s, label)
        self._seq += 1
        heapq.heappush(self._heap, (t_s, priority, self._seq, fn, handle))
        return handle

    def post(self, t_s: float, priority: int, handler: Callable[[A], None], arg: A) -> None:
        """Run ``handler(arg)`` at ``t_s`` (a cheap event: it cannot be cancelled).

        Unlike ``schedule`` this does not check ``t_s`` against now: hot-path callers post
        times they derived from now (the serving simulation checks its inputs where they enter).
        """
        seq = self._seq = self._seq + 1
        _heappush(self._heap, (t_s, priority, seq, handler, arg))

    def peek_key(self) -> tuple[float, int] | None:
        """(time, priority) of the next event, if any."""
        return self._heap[0][:2] if self._heap else None

    def after(
        self, delay_s: float, fn: Callable[[], None], *, priority: int, label: str
    ) -> EventHandle:
        return self.schedule(self.now_s + max(0.0, delay_s), fn, priority=priority, label=label)

    def now(self) -> float:
        return self.now_s

    @property
    def num_pending(self) -> int:
        return len(self._heap)

    def peek_time(self) -> float | None:
        return self._heap[0][0] if self._heap else None

    def run(self, until_s: float, on_event: Callable[[EventHandle], None] | None = None) -> int:
        """Run every event with time <= ``until_s``; return how many ran. Time ends at until_s."""
        heap = self._heap
        ran = 0
        while heap and heap[0][0] <= until_s:
            t_s, _prio, _seq, fn, handle = heapq.heappop(heap)
            if handle.__class__ is not EventHandle:
                self.now_s = t_s
                self._run_posted(t_s, fn, handle)
                ran += 1
                continue
            if handle.cancelled:
                continue
            self.now_s = t_s
            try:
                fn()
            except GpuplaneError:
                raise
            except Exception as exc:
                raise TwinError(
                    f"event {handle.label!r} at t={t_s:.3f}s failed: {type(exc).__name__}: {exc}"
                ) from exc
            ran += 1
            if on_event is not None:
                on_event(handle)
        self.now_s = max(self.now_s, until_s)
        self.num_processed += ran
        return ran

    @staticmethod
    def _run_posted(t_s: float, handler: Callable[[Any], None], arg: object) -> None:
        try:
            handler(arg)
        except GpuplaneError:
            raise
        except Exception as exc:
            name = getattr(handler, "__qualname__", repr(handler))
            raise TwinError(
                f"event {name} at t={t_s:.3f}s failed: {type(exc).__name__}: {exc}"
            ) from exc

    def run_handlers(
        self,
        until_s: float,
        settle: Callable[[], None] | None = None,
        settle_priority: int = 0,
        pending: Sized | None = None,
    ) -> int:
        """Run every event with time <= ``until_s`` (errors pass through); how many ran.

        ``settle()`` runs after an event unless the next one is at the same time with a
        priority below ``settle_priority``: once the world of an instant has changed, before
        the events that react to it. With ``pending`` (the caller's collection of what settle
        works off), settle is not called while it is empty: one call fewer per event on the
        hot path. Time ends at ``until_s`` when that is finite, else at the last event.
        """
        heap = self._heap
        pop = heapq.heappop
        handle_cls = EventHandle
        ran = 0
        while heap and heap[0][0] <= until_s:
            t_s, _prio, _seq, fn, arg = pop(heap)
            if arg.__class__ is handle_cls:
                if arg.cancelled:
                    continue
                self.now_s = t_s
                fn()
            else:
                self.now_s = t_s
                fn(arg)
            ran += 1
            if (
                settle is not None
                and (pending is None or pending)
                and (not heap or heap[0][0] > t_s or heap[0][1] >= settle_priority)
            ):
                settle()
        if math.isfinite(until_s):
            self.now_s = max(self.now_s, until_s)
        self.num_processed += ran
        return ran
