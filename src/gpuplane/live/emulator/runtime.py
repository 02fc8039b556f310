"""One engine served in real time: requests in, tokens out when their steps end.

:class:`EngineRuntime` owns the engine's :class:`~gpuplane.serving.engine.wall_clock.ClockDriver`
and the open streams. Its task (:meth:`EngineRuntime.run`) sleeps until the end of the step in
progress (``Engine.next_step_end_s``) or until a request arrives, then commits what ended by the
clock (``ClockDriver.poll``) and wakes every stream that got tokens. A late wake (a busy event
loop) commits every step that ended meanwhile: the emulated times stay those of the twin, only
their delivery is late.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from gpuplane.live.emulator.clock import ScaledClock
from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.engine.live import LiveRequest, RequestRecord
from gpuplane.serving.engine.wall_clock import ClockDriver
from gpuplane.serving.request import Request


@dataclass(slots=True)
class Stream:
    """One request being served: its live state, and an event set when it has news."""

    req: Request
    live: LiveRequest
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    record: RequestRecord | None = None
    seen: int = 0  # tokens the runtime has announced

    @property
    def num_emitted(self) -> int:
        times = self.live.token_times
        return len(times) if times is not None else 0

    @property
    def done(self) -> bool:
        return self.record is not None and self.num_emitted >= self.record.output_tokens


# The runtime's precise wake (``EngineRuntime.run``): a wait of PRECISE_FROM_S wall seconds or
# more ends EARLY_S early on the event loop, and a blocking sleep (the OS's high-resolution
# timer) takes the rest. asyncio's epoll timeouts are rounded up to whole milliseconds, which
# alone delivered tokens ~0.6 ms late; shorter waits (fast time scales) stay on the loop.
EARLY_S = 0.0015
PRECISE_FROM_S = 0.003


def _no_wait(t_s: float) -> None:
    """ClockDriver's sync wait is not used: the runtime's task waits on the event loop."""


class EngineRuntime:
    """Mutable owner of the engine while it serves HTTP (one per process)."""

    def __init__(
        self,
        engine: Engine,
        clock: ScaledClock,
        ready_at_s: float = 0.0,
        *,
        precise_wake: bool = False,
    ) -> None:
        if not engine.record:
            raise ValueError("the engine must record token times (record_token_times=True)")
        self.engine = engine
        self.clock = clock
        self.ready_at_s = ready_at_s
        # The blocking end of a precise wake holds up everything on the event loop: only for a
        # process that serves this engine alone (``gpuplane serve engine``).
        self.precise_wake = precise_wake
        self.driver = ClockDriver(engine, clock, _no_wait)
        self.streams: dict[str, Stream] = {}
        # Called with every record the engine leaves (the NixlConnector announces holds).
        self.on_finished: list[Callable[[RequestRecord], None]] = []
        self._wake = asyncio.Event()
        self._seq = 0

    @property
    def ready(self) -> bool:
        return self.clock.now_s() >= self.ready_at_s

    def next_id(self, prefix: str) -> str:
        self._seq += 1
        return f"{prefix}-{self._seq:08d}"

    def submit(self, req: Request, external_kv_tokens: int = 0, at: float | None = None) -> Stream:
        """``req`` reaches the engine at ``at`` (default ``req.arrival_s``: when the server first
        saw it; <= now); its stream (tokens come as the runtime's task commits steps).
        ``external_kv_tokens``: prompt tokens whose KV was read from a prefill engine (P/D)."""
        when = req.arrival_s if at is None else at
        live = self.driver.submit(req, external_kv_tokens, at=when)
        stream = Stream(req, live)
        self.streams[req.request_id] = stream
        self._publish()
        self._wake.set()
        return stream

    def release_held(self, request_id: str) -> int:
        """Free the KV blocks the engine holds for ``request_id``; the engine may now schedule
        a request that waited for them."""
        freed = self.driver.release_held(request_id)
        self._publish()
        self._wake.set()
        return freed

    def fail(self, req: Request, queued_s: float) -> RequestRecord:
        """``req`` ends with an error before it was scheduled (counted as ``error``)."""
        rec = self.driver.fail(req, queued_s)
        self._publish()
        return rec

    def poll(self) -> None:
        """Commit what ended by now and wake the streams that got tokens (also before a scrape)."""
        self.driver.poll()
        self._publish()

    def _publish(self) -> None:
        records = self.driver.records
        if records:
            for rec in records:
                for hook in self.on_finished:
                    hook(rec)
                stream = self.streams.pop(rec.request_id, None)
                if stream is not None:
                    stream.record = rec
                    stream.changed.set()
            records.clear()
        for stream in self.streams.values():
            n = stream.num_emitted
            if n > stream.seen:
                stream.seen = n
                stream.changed.set()

    async def run(self) -> None:
        """Serve until cancelled."""
        engine, clock, wake = self.engine, self.clock, self._wake
        while True:
            t = engine.next_step_end_s()
            delay = clock.wall_delay_s(t) if math.isfinite(t) else None
            if delay is None or delay > 0:
                # A long wait ends EARLY_S before the step does and the rest is slept exactly:
                # the event loop's timers are rounded up to the millisecond (and wake late).
                early = self.precise_wake and delay is not None and delay >= PRECISE_FROM_S
                with contextlib.suppress(TimeoutError):
                    timeout = delay - EARLY_S if early and delay is not None else delay
                    await asyncio.wait_for(wake.wait(), timeout)
                if early and not wake.is_set():
                    rest = clock.wall_delay_s(t)
                    if rest > 0:
                        time.sleep(rest)  # at most EARLY_S, when the loop would idle anyway
            else:
                await asyncio.sleep(0)  # late: commit now, but let handlers run
            wake.clear()
            self.poll()


async def emitted(stream: Stream) -> AsyncIterator[int]:
    """The stream's token count each time it grows; ends after the last token."""
    sent = 0
    while True:
        await stream.changed.wait()
        stream.changed.clear()
        n = stream.num_emitted
        if n > sent:
            sent = n
            yield n
        if stream.done:
            return
