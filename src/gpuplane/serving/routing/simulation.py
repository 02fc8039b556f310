"""ServingSimulation: a request stream through a router over engines, as a discrete-event run.

Time is the house's event kernel (:class:`~gpuplane.core.kernel.EventLoop`, key ``(time,
priority, seq)``) with typed handlers: engine control first, then arrivals, KV transfers, engine
steps, and metric scrapes last (:class:`ServingPriority`), so the requests of one instant are all
queued before an engine plans the step that starts then. The request path (routing, P/D split,
reroutes, outcomes) is :class:`~gpuplane.serving.routing.request_path.RequestPath`.

Engines can be added (with a ready time: a cold start during which they take no requests) and
removed while the run goes on, either draining (no new requests; gone when idle) or aborting
(in-flight requests are rerouted, or counted as aborted after ``max_reroutes``). Runs advance
with ``run_until`` so a controller (an autoscaler) can act between calls. With prefill and
decode engines, requests are split (:mod:`pd`).

Deterministic: the only randomness is the routers' tie break, from a named stream of ``seed``.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

import numpy as np

from gpuplane.core.kernel import EventLoop
from gpuplane.core.tsdb import SeriesStore
from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.metrics.exporter import engine_samples
from gpuplane.serving.request import Request
from gpuplane.serving.routing.engine_slot import EngineSlot
from gpuplane.serving.routing.outcome import SimulationResult, Status
from gpuplane.serving.routing.prefix_index import PrefixIndex
from gpuplane.serving.routing.priority import ServingPriority
from gpuplane.serving.routing.request_path import RequestPath
from gpuplane.serving.routing.router import Role, Router
from gpuplane.serving.routing.settings import SimulationSettings
from gpuplane.serving.traffic.sessions import Session

__all__ = ["EngineSlot", "ServingSimulation", "SimulationSettings"]

# Plain ints in the heap keys: compared at every push and pop.
CONTROL, ARRIVAL = int(ServingPriority.CONTROL), int(ServingPriority.ARRIVAL)
ENGINE, SCRAPE = int(ServingPriority.ENGINE), int(ServingPriority.SCRAPE)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while the event loop runs, restored afterwards.

    The loop makes millions of short-lived objects that reference counting frees and almost no
    reference cycles, but the collector would still walk every long-lived object (the growing
    list of outcomes) each time its allocation counters trip: about 5% of an hour-long run.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class ServingSimulation:
    """Owner of one serving run (mutable): its clock, its engines, its request path."""

    def __init__(
        self,
        router: Router,
        settings: SimulationSettings | None = None,
        *,
        prefill_router: Router | None = None,
        kv_transfer_s: Callable[[int], float] | None = None,
        prefix_index: PrefixIndex | None = None,
    ) -> None:
        self.settings = settings or SimulationSettings()
        self.loop = EventLoop()
        self.path = RequestPath(
            self.loop,
            router,
            self.settings,
            prefill_router=prefill_router,
            kv_transfer_s=kv_transfer_s,
            prefix_index=prefix_index,
        )
        self._all: list[Engine] = []
        self.store = SeriesStore() if self.settings.scrape_interval_s else None
        if self.settings.scrape_interval_s:
            self.loop.post(self.settings.scrape_interval_s, SCRAPE, self._scrape, None)

    @property
    def now_s(self) -> float:
        return self.loop.now_s

    @property
    def router(self) -> Router:
        return self.path.router

    @property
    def prefix_index(self) -> PrefixIndex:
        return self.path.prefix_index

    # -- setup and control ------------------------------------------------------------------
    def add_engine(
        self, engine: Engine, *, ready_at_s: float | None = None, role: Role = "both"
    ) -> None:
        """Add an engine now; it takes requests from ``ready_at_s`` (cold start) on."""
        path, now = self.path, self.loop.now_s
        if engine.engine_id in path.slots:
            raise ValueError(f"engine {engine.engine_id} is already in the simulation")
        engine.advance(max(engine.now_s, now))
        path.slots[engine.engine_id] = EngineSlot(engine, role)
        path.slots = dict(sorted(path.slots.items()))
        path.slots_changed()
        self._all.append(engine)
        ready = now if ready_at_s is None else max(ready_at_s, now)
        self.loop.post(ready, CONTROL, self._ready, engine.engine_id)

    def remove_engine(self, engine_id: str, *, drain: bool = True) -> None:
        """Stop routing to an engine; drain it (it leaves when idle) or abort its requests."""
        path, now = self.path, self.loop.now_s
        slot = path.slots[engine_id]
        slot.accepting = False
        path.slots_changed()
        path.prefix_index.forget(engine_id)
        if drain:
            slot.draining = True
            path.handle(slot, slot.engine.advance(now))
            if engine_id in path.slots and slot.engine.is_idle():
                del path.slots[engine_id]
                path.drained_s[engine_id] = now
                path.slots_changed()
            return
        done = slot.engine.advance(now)
        aborted = slot.engine.abort_all(now)
        del path.slots[engine_id]
        path.slots_changed()
        path.handle(slot, done + aborted)

    def kill_engine(self, engine_id: str, why: str) -> int:
        """End a draining engine now (SIGKILL after its grace period): what it still serves is
        aborted, not rerouted (a client whose stream broke sees an error). Returns how many
        requests were aborted; 0 when the engine had already drained and left."""
        path, now = self.path, self.loop.now_s
        slot = path.slots.get(engine_id)
        if slot is None:
            return 0
        path.handle(slot, slot.engine.advance(now))
        if engine_id not in path.slots:
            return 0
        aborted = slot.engine.abort_all(now)
        del path.slots[engine_id]
        path.slots_changed()
        path.abandon(slot, aborted, why)
        return len(aborted)

    def drained_at(self, engine_id: str) -> float | None:
        """When a draining engine went idle and left (None: it has not)."""
        return self.path.drained_s.get(engine_id)

    def engines(self) -> list[Engine]:
        return [s.engine for s in self.path.slots.values()]

    def submit(self, requests: Iterable[Request]) -> None:
        """A stream of requests sorted by arrival time (read lazily)."""
        self._pull(iter(requests))

    def submit_sessions(self, sessions: Iterable[Session]) -> None:
        for s in sessions:
            self.loop.post(s.start_s, ARRIVAL, self.path.next_turn, (s, 0))

    # -- running ----------------------------------------------------------------------------
    def run_until(self, t_end: float) -> None:
        with _collector_paused():
            self.loop.run_handlers(t_end, self._settle, ENGINE, pending=self.path.dirty)

    def run(self, until_s: float | None = None) -> SimulationResult:
        self.run_until(math.inf if until_s is None else until_s)
        return self.result()

    def result(self) -> SimulationResult:
        """Outcomes so far; requests not finished are reported in flight."""
        path = self.path
        open_ = [
            path.outcome(
                tr,
                Status.IN_FLIGHT,
                "queued at the router" if tr in path.queue else "in flight at end of run",
            )
            for tr in path.tracked.values()
        ]
        values, weights = [], []
        for e in self._all:
            if e.stats.itl_samples is not None:
                v, w = e.stats.itl_samples.arrays()
                values.append(v)
                weights.append(w)
        return SimulationResult(
            tuple(path.outcomes + open_),
            np.concatenate(values) if values else np.zeros(0),
            np.concatenate(weights) if weights else np.zeros(0, dtype=np.int64),
            self.loop.now_s,
            path.num_arrived,
            self.store,
        )

    # -- event handlers ---------------------------------------------------------------------
    def _pull(self, it: Iterator[Request]) -> None:
        req = next(it, None)
        if req is not None:
            if req.arrival_s < self.loop.now_s:
                raise ValueError(
                    f"{req.request_id} arrives at {req.arrival_s}, before {self.loop.now_s}"
                )
            self.loop.post(req.arrival_s, ARRIVAL, self._arrival, (it, req))

    def _arrival(self, item: tuple[Iterator[Request], Request]) -> None:
        it, req = item
        self.path.arrive(req, None)
        self._pull(it)

    def _engine_step(self, engine_id: str) -> None:
        """A step (or run of steps) the engine asked to be woken for has ended."""
        path = self.path
        slot = path.slots.get(engine_id)
        t = self.loop.now_s
        if slot is not None and slot.wake_s == t:
            slot.wake_s = math.inf
            records = slot.engine.advance(t)
            if records or slot.draining:
                path.handle(slot, records)
            path.dirty.add(engine_id)

    def _ready(self, engine_id: str) -> None:
        path = self.path
        slot = path.slots.get(engine_id)
        if slot is not None:
            slot.ready = True
            path.slots_changed()
            for _ in range(len(path.queue)):
                path.route(path.queue.popleft())

    def _settle(self) -> None:
        """Engines whose queue changed at this instant plan their next step (in id order) and
        are woken when it ends (an event only when that time moved)."""
        dirty = self.path.dirty
        if dirty:
            slots = self.path.slots
            for eid in sorted(dirty) if len(dirty) > 1 else dirty:
                slot = slots.get(eid)
                if slot is not None:
                    t = slot.engine.next_event_time()
                    if t != slot.wake_s:
                        slot.wake_s = t
                        if t != math.inf:
                            self.loop.post(t, ENGINE, self._engine_step, eid)
            dirty.clear()

    def _scrape(self, _: None) -> None:
        assert self.store is not None and self.settings.scrape_interval_s
        path, t = self.path, self.loop.now_s
        for eid, slot in list(path.slots.items()):
            path.handle(slot, slot.engine.advance(t))  # also brings its KV cache to t
            self.store.add(t, engine_samples(slot.engine, {"pod": eid}))
            path.dirty.add(eid)
        busy = any(not s.engine.is_idle() for s in path.slots.values())
        if self.loop.num_pending or busy:
            self.loop.post(t + self.settings.scrape_interval_s, SCRAPE, self._scrape, None)
