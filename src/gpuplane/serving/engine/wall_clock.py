"""Driving an engine by a clock that moves on its own (real time), through the same calls the
simulation makes: ``advance(now)``, ``add_request(req, now)``, ``next_event_time()``.

The engine never reads a clock: whoever drives it passes time in. The simulation passes the
times of its events; this driver passes what its :class:`~gpuplane.core.clock.Clock` reads, and
waits (``wait_until``) for the time the engine asks to be woken at. An HTTP emulator runs an
engine this way in real time (``wait_until`` sleeps); a test runs it with a clock that jumps to
the time waited for, and gets the records the simulation gets.

When the clock reads later than the engine asked (a late wake), ``advance`` commits every step
that ended by then: steps still start back to back at the times the step model gives.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from gpuplane.core.clock import Clock
from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.engine.live import LiveRequest, RequestRecord
from gpuplane.serving.request import Request


class ClockDriver:
    """Owner of one engine's records while a clock drives it (mutable)."""

    def __init__(self, engine: Engine, clock: Clock, wait_until: Callable[[float], None]) -> None:
        self.engine = engine
        self.clock = clock
        self.wait_until = wait_until
        self.records: list[RequestRecord] = []

    def submit(
        self, req: Request, external_kv_tokens: int = 0, at: float | None = None
    ) -> LiveRequest:
        """``req`` reaches the engine now, or at ``at`` (<= now: when a server first saw it, so
        that parsing it does not delay it), though never before the engine's own time (a poll
        may have moved it past ``at``); add every request of an instant before ``poll``. Its
        live state, whose ``token_times`` a streaming server reads. ``external_kv_tokens``:
        prompt tokens whose KV another engine computed (``Engine.add_request``)."""
        now = self.clock.now_s() if at is None else max(at, self.engine.now_s)
        self.records += self.engine.advance(now)
        return self.engine.add_request(req, now, external_kv_tokens)

    def release_held(self, request_id: str) -> int:
        """Free the blocks the engine holds for ``request_id`` now (``Engine.release_held``)."""
        self.poll()
        return self.engine.release_held(request_id, self.engine.now_s)

    def fail(self, req: Request, queued_s: float) -> RequestRecord:
        """``req``, which reached the engine at ``queued_s``, ends now with an error before it
        was scheduled (``Engine.fail_request``); its record (not added to ``records``)."""
        self.poll()
        return self.engine.fail_request(req, min(queued_s, self.engine.now_s), self.engine.now_s)

    def poll(self) -> None:
        """Commit what ended by now (the engine plans its next step when next asked)."""
        self.records += self.engine.advance(self.clock.now_s())

    def serve_until(self, t_s: float) -> None:
        """Serve the steps that end before ``t_s``, then wait for ``t_s``."""
        engine = self.engine
        while (t := engine.next_event_time()) < t_s:
            self.wait_until(t)
            self.poll()
        self.wait_until(t_s)

    def drain(self) -> None:
        """Serve until the engine is idle."""
        engine = self.engine
        while math.isfinite(t := engine.next_event_time()):
            self.wait_until(t)
            self.poll()

    def run(self, requests: Iterable[Request]) -> list[RequestRecord]:
        """Submit each request at its arrival time (sorted by it), serve them all; the records."""
        for req in requests:
            if req.arrival_s > self.clock.now_s():
                self.serve_until(req.arrival_s)
            self.submit(req)
        self.drain()
        return self.records
