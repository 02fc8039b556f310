"""ServingSimulation: a request stream through a router over engines, as a discrete-event run.

The event heap holds ``(time, priority, seq)``: engine control first, then arrivals, KV
transfers, engine steps, and metric scrapes last, so the requests of one instant are all queued
before an engine plans the step that starts then. Engines can be added (with a ready time: a cold
start during which they take no requests) and removed while the run goes on, either draining
(no new requests; gone when idle) or aborting (in-flight requests are rerouted, or counted as
aborted after ``max_reroutes``). Runs advance with ``run_until`` so a controller (an autoscaler)
can act between calls. With prefill and decode engines, requests are split (:mod:`pd`).

Deterministic: the only randomness is the routers' tie break, from a named stream of ``seed``.
"""

from __future__ import annotations

import gc
import heapq
import math
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuplane.core.rng import RngStreams
from gpuplane.core.tsdb import SeriesStore
from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.engine.request import Request
from gpuplane.serving.metrics.exporter import engine_samples
from gpuplane.serving.routing.flow import RequestFlow
from gpuplane.serving.routing.outcome import RequestOutcome, SimulationResult, Status
from gpuplane.serving.routing.pd import PDSettings
from gpuplane.serving.routing.prefix_index import PrefixIndex
from gpuplane.serving.routing.router import EngineView, Role, Router
from gpuplane.serving.traffic.sessions import Session

PRIO_CONTROL, PRIO_ARRIVAL, PRIO_TRANSFER, PRIO_ENGINE, PRIO_SCRAPE = 0, 10, 20, 30, 90
DEFAULT_PD = PDSettings()


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


@dataclass(frozen=True)
class SimulationSettings:
    router_queue_limit: int = 0  # requests held while no engine is ready (0: reject at once)
    max_reroutes: int = 3
    scrape_interval_s: float | None = None  # record every engine's /metrics this often
    seed: int = 0
    pd: PDSettings = DEFAULT_PD


@dataclass(slots=True)
class EngineSlot:
    engine: Engine
    role: Role
    ready: bool = False
    accepting: bool = True
    draining: bool = False
    outstanding: int = 0
    wake_s: float = math.inf
    # The engine as the router last saw it (request-independent fields), and the engine's
    # state_version then: reused while neither the engine nor ``outstanding`` changed and no
    # decode step started since (one that did would take its KV blocks).
    view: EngineView | None = None
    view_version: int = -1
    view_due: float = math.inf  # observe(t) changes nothing for t <= view_due

    @property
    def routable(self) -> bool:
        return self.ready and self.accepting


@dataclass(slots=True)
class _Tracked:
    req: Request
    session: tuple[Session, int] | None = None
    reroutes: int = 0
    phase: str = "whole"  # whole | prefill (then decode) | decode
    engine_id: str | None = None
    prefill_engine_id: str | None = None
    decode_engine_id: str | None = None
    prefill_cached: int = 0


@dataclass
class _State:
    heap: list[tuple[float, int, int, str, Any]] = field(default_factory=list)
    seq: int = 0
    dirty: set[str] = field(default_factory=set)


class ServingSimulation(RequestFlow):
    """Owner of one serving run (mutable)."""

    def __init__(
        self,
        router: Router,
        settings: SimulationSettings | None = None,
        *,
        prefill_router: Router | None = None,
        kv_transfer_s: Callable[[int], float] | None = None,
        prefix_index: PrefixIndex | None = None,
    ) -> None:
        self.router = router
        self.prefill_router = prefill_router or router
        self.settings = settings or SimulationSettings()
        self.kv_transfer_s = kv_transfer_s
        self.prefix_index = prefix_index or PrefixIndex()
        self.now_s = 0.0
        self._st = _State()
        self._slots: dict[str, EngineSlot] = {}
        self._all: list[Engine] = []
        self._tracked: dict[str, _Tracked] = {}
        self._outcomes: list[RequestOutcome] = []
        self._queue: deque[_Tracked] = deque()
        self._num_arrived = 0
        self._rr = 0
        self._session_engine: dict[str, str] = {}
        self._rng = RngStreams(self.settings.seed).stream("routing-tie-break")
        self._routable = {}
        self._pd = None
        self.store = SeriesStore() if self.settings.scrape_interval_s else None
        if self.settings.scrape_interval_s:
            self._push(self.settings.scrape_interval_s, PRIO_SCRAPE, "scrape", None)

    # -- setup and control ------------------------------------------------------------------
    def add_engine(
        self, engine: Engine, *, ready_at_s: float | None = None, role: Role = "both"
    ) -> None:
        """Add an engine now; it takes requests from ``ready_at_s`` (cold start) on."""
        if engine.engine_id in self._slots:
            raise ValueError(f"engine {engine.engine_id} is already in the simulation")
        engine.advance(max(engine.now_s, self.now_s))
        slot = EngineSlot(engine, role)
        self._slots[engine.engine_id] = slot
        self._slots = dict(sorted(self._slots.items()))
        self._slots_changed()
        self._all.append(engine)
        ready = self.now_s if ready_at_s is None else max(ready_at_s, self.now_s)
        self._push(ready, PRIO_CONTROL, "ready", engine.engine_id)

    def remove_engine(self, engine_id: str, *, drain: bool = True) -> None:
        """Stop routing to an engine; drain it (it leaves when idle) or abort its requests."""
        slot = self._slots[engine_id]
        slot.accepting = False
        self._slots_changed()
        self.prefix_index.forget(engine_id)
        if drain:
            slot.draining = True
            self._handle(slot, slot.engine.advance(self.now_s))
            if engine_id in self._slots and slot.engine.is_idle():
                del self._slots[engine_id]
                self._slots_changed()
            return
        done = slot.engine.advance(self.now_s)
        aborted = slot.engine.abort_all(self.now_s)
        del self._slots[engine_id]
        self._slots_changed()
        self._handle(slot, done + aborted)

    def engines(self) -> list[Engine]:
        return [s.engine for s in self._slots.values()]

    def submit(self, requests: Iterable[Request]) -> None:
        """A stream of requests sorted by arrival time (read lazily)."""
        self._pull(iter(requests))

    def submit_sessions(self, sessions: Iterable[Session]) -> None:
        for s in sessions:
            self._push(s.start_s, PRIO_ARRIVAL, "turn", (s, 0))

    # -- running ----------------------------------------------------------------------------
    def run_until(self, t_end: float) -> None:
        with _collector_paused():
            self._loop(t_end)
        if math.isfinite(t_end):
            self.now_s = max(self.now_s, t_end)

    def _loop(self, t_end: float) -> None:
        heap, dirty = self._st.heap, self._st.dirty
        pop = heapq.heappop
        while heap and heap[0][0] <= t_end:
            t, _prio, _, kind, payload = pop(heap)
            self.now_s = t
            if kind == "engine":  # the common event, handled here (see _dispatch_event)
                slot = self._slots.get(payload)
                if slot is not None and slot.wake_s == t:
                    slot.wake_s = math.inf
                    records = slot.engine.advance(t)
                    if records or slot.draining:
                        self._handle(slot, records)
                    dirty.add(payload)
            else:
                self._dispatch_event(kind, payload, t)
            if dirty and (not heap or heap[0][0] > t or heap[0][1] >= PRIO_ENGINE):
                slots = self._slots
                for eid in sorted(dirty) if len(dirty) > 1 else dirty:
                    slot = slots.get(eid)
                    if slot is not None:
                        self._wake(slot)
                dirty.clear()

    def run(self, until_s: float | None = None) -> SimulationResult:
        self.run_until(math.inf if until_s is None else until_s)
        return self.result()

    def result(self) -> SimulationResult:
        """Outcomes so far; requests not finished are reported in flight."""
        open_ = [
            self._outcome(
                tr,
                Status.IN_FLIGHT,
                "queued at the router" if tr in self._queue else "in flight at end of run",
            )
            for tr in self._tracked.values()
        ]
        values, weights = [], []
        for e in self._all:
            if e.stats.itl_samples is not None:
                v, w = e.stats.itl_samples.arrays()
                values.append(v)
                weights.append(w)
        return SimulationResult(
            tuple(self._outcomes + open_),
            np.concatenate(values) if values else np.zeros(0),
            np.concatenate(weights) if weights else np.zeros(0, dtype=np.int64),
            self.now_s,
            self._num_arrived,
            self.store,
        )

    # -- events -----------------------------------------------------------------------------
    def _push(self, t: float, prio: int, kind: str, payload: object) -> None:
        self._st.seq += 1
        heapq.heappush(self._st.heap, (t, prio, self._st.seq, kind, payload))

    def _pull(self, it: Iterator[Request]) -> None:
        req = next(it, None)
        if req is not None:
            if req.arrival_s < self.now_s:
                raise ValueError(
                    f"{req.request_id} arrives at {req.arrival_s}, before {self.now_s}"
                )
            self._push(req.arrival_s, PRIO_ARRIVAL, "arrival", (it, req))

    def _dispatch_event(self, kind: str, payload: Any, t: float) -> None:
        if kind == "engine":
            slot = self._slots.get(payload)
            if slot is not None and slot.wake_s == t:
                slot.wake_s = math.inf
                self._handle(slot, slot.engine.advance(t))
                self._mark(slot)
        elif kind == "arrival":
            it, req = payload
            self._arrive(req, None)
            self._pull(it)
        elif kind == "turn":
            session, k = payload
            self._arrive(session.request(k, t), (session, k))

        elif kind == "transfer":
            self._transfer_done(payload, t)
        elif kind == "ready":
            slot = self._slots.get(payload)
            if slot is not None:
                slot.ready = True
                self._slots_changed()
                for _ in range(len(self._queue)):
                    self._route(self._queue.popleft())

        elif kind == "scrape":
            self._scrape(t)

    def _mark(self, slot: EngineSlot) -> None:
        self._st.dirty.add(slot.engine.engine_id)

    def _wake(self, slot: EngineSlot) -> None:
        t = slot.engine.next_event_time()
        if t != slot.wake_s:
            slot.wake_s = t
            if math.isfinite(t):
                st = self._st
                st.seq += 1
                heapq.heappush(st.heap, (t, PRIO_ENGINE, st.seq, "engine", slot.engine.engine_id))

    def _scrape(self, t: float) -> None:
        assert self.store is not None and self.settings.scrape_interval_s
        for eid, slot in list(self._slots.items()):
            self._handle(slot, slot.engine.advance(t))  # also brings its KV cache to t
            self.store.add(t, engine_samples(slot.engine, {"pod": eid}))
            self._st.dirty.add(eid)
        busy = any(not s.engine.is_idle() for s in self._slots.values())
        if self._st.heap or busy:
            self._push(t + self.settings.scrape_interval_s, PRIO_SCRAPE, "scrape", None)
