"""The path of one request through the serving system: route, dispatch, split, finish, reroute.

:class:`RequestPath` owns what this takes: the routers, the engines (as :class:`EngineSlot`), the
requests in flight and the outcomes. Time is the serving run's event loop (the house's kernel,
:mod:`gpuplane.core.kernel`): the path posts KV-transfer and next-turn events to it, and notes in
``dirty`` each engine whose queue it changed (the simulation has those plan their next step once
every event of the instant that comes before engine steps has run).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gpuplane.core.kernel import EventLoop
from gpuplane.core.rng import RngStreams
from gpuplane.serving.engine.live import RequestRecord
from gpuplane.serving.request import FinishReason, Request
from gpuplane.serving.routing.engine_slot import EngineSlot
from gpuplane.serving.routing.outcome import RequestOutcome, Status
from gpuplane.serving.routing.pd import (
    PREFILL_SUFFIX,
    original_id,
    prefill_request,
    should_disaggregate,
)
from gpuplane.serving.routing.prefix_index import ChainEntry, PrefixIndex
from gpuplane.serving.routing.priority import ServingPriority
from gpuplane.serving.routing.router import (
    NEEDS_PRECISE_PREFIX,
    NEEDS_PREFIX_INDEX,
    EngineView,
    Role,
    Router,
    RoutingSnapshot,
)
from gpuplane.serving.routing.settings import SimulationSettings
from gpuplane.serving.traffic.sessions import Session

ARRIVAL, TRANSFER = int(ServingPriority.ARRIVAL), int(ServingPriority.TRANSFER)


@dataclass(slots=True)
class TrackedRequest:
    req: Request
    session: tuple[Session, int] | None = None
    reroutes: int = 0
    phase: str = "whole"  # whole | prefill (then decode) | decode
    engine_id: str | None = None
    prefill_engine_id: str | None = None
    decode_engine_id: str | None = None
    prefill_cached: int = 0


class RequestPath:
    """Owner of the requests of one serving run and of the engines they are routed to (mutable)."""

    def __init__(
        self,
        loop: EventLoop,
        router: Router,
        settings: SimulationSettings,
        *,
        prefill_router: Router | None = None,
        kv_transfer_s: Callable[[int], float] | None = None,
        prefix_index: PrefixIndex | None = None,
    ) -> None:
        self.loop = loop
        self.router = router
        self.prefill_router = prefill_router or router
        self.settings = settings
        self.kv_transfer_s = kv_transfer_s
        self.prefix_index = prefix_index or PrefixIndex()
        self.slots: dict[str, EngineSlot] = {}
        self.dirty: set[str] = set()  # engines whose queue changed since they last planned
        self.tracked: dict[str, TrackedRequest] = {}
        self.outcomes: list[RequestOutcome] = []
        self.queue: deque[TrackedRequest] = deque()  # held while no engine is ready
        self.num_arrived = 0
        self.rr = 0
        self.session_engine: dict[str, str] = {}
        self.rng: np.random.Generator = RngStreams(settings.seed).stream("routing-tie-break")
        # Derived from the set of engines and their readiness (see slots_changed).
        self.routable: dict[tuple[Role, ...], tuple[list[EngineSlot], int]] = {}
        self.pd: bool | None = None
        # Draining engines that went idle and left, and when (a terminating pod's end).
        self.drained_s: dict[str, float] = {}

    # -- arrival and routing ------------------------------------------------------------------
    def arrive(self, req: Request, session: tuple[Session, int] | None) -> None:
        if req.request_id in self.tracked:
            raise ValueError(f"request id {req.request_id} is already in flight")
        self.num_arrived += 1
        tr = TrackedRequest(req, session)
        self.tracked[req.request_id] = tr
        self.route(tr)

    def next_turn(self, turn: tuple[Session, int]) -> None:
        """The event handler: a session's next turn arrives."""
        session, k = turn
        self.arrive(session.request(k, self.loop.now_s), turn)

    def _candidates(self, roles: tuple[Role, ...], req: Request) -> tuple[list[EngineSlot], str]:
        """Routable engines of these roles that can serve ``req``, or why there are none."""
        cached = self.routable.get(roles)
        if cached is None:
            # Kept until an engine is added, removed, becomes ready or stops accepting.
            found = [s for s in self.slots.values() if s.routable and s.role in roles]
            shortest = min((s.engine.config.max_model_len for s in found), default=0)
            cached = self.routable[roles] = (found, shortest)
        slots, shortest = cached
        if not slots:
            return [], "no ready engine"
        need = req.prompt_tokens + 1  # Engine.rejection: room for one output token
        if need <= shortest:
            return slots, ""
        ok = [s for s in slots if need <= s.engine.config.max_model_len]
        if not ok:
            return [], slots[0].engine.rejection(req) or "no engine can serve it"
        return ok, ""

    def slots_changed(self) -> None:
        """Forget what was derived from the set of engines and their readiness."""
        self.routable.clear()
        self.pd = None

    def pd_mode(self) -> bool:
        if self.pd is None:
            self.pd = any(s.role != "both" for s in self.slots.values())
        return self.pd

    def route(self, tr: TrackedRequest) -> None:
        req, t = tr.req, self.loop.now_s
        pd = self.pd_mode()
        slots, why = self._candidates(("decode", "both") if pd else ("both",), req)
        if not slots:
            self._no_engine(tr, why)
            return
        router = self.router
        needs = router.needs
        snap, chain = self._snapshot(req, slots, needs)
        decision = router.decide(snap)
        if decision.engine_id is None:
            self._no_engine(tr, decision.reason)
            return
        dest = self.slots[decision.engine_id]
        self._after_decision(req, dest, needs, chain)
        if pd and self._try_split(tr, dest):
            return
        tr.phase, tr.engine_id = "whole", dest.engine.engine_id
        self.send(dest, req, t)

    def _try_split(self, tr: TrackedRequest, dest: EngineSlot) -> bool:
        req = tr.req
        prefill, _ = self._candidates(("prefill",), req)
        cached = dest.engine.cached_prefix_tokens(req.content(), req.prompt_tokens)
        if not prefill or not should_disaggregate(req.prompt_tokens, cached, self.settings.pd):
            return False
        pre = prefill_request(req)
        needs = self.prefill_router.needs
        snap, chain = self._snapshot(pre, prefill, needs)
        decision = self.prefill_router.decide(snap)
        if decision.engine_id is None:
            return False
        pslot = self.slots[decision.engine_id]
        self._after_decision(pre, pslot, needs, chain)
        tr.phase = "prefill"
        tr.prefill_engine_id = pslot.engine.engine_id
        tr.decode_engine_id = dest.engine.engine_id
        # NixlConnector: the prefill engine keeps the prompt's blocks until the decode engine
        # has read them (transfer_done frees them).
        pslot.engine.hold_on_finish.add(pre.request_id)
        self.send(pslot, pre, self.loop.now_s)
        return True

    def _snapshot(
        self, req: Request, slots: list[EngineSlot], needs: frozenset[str]
    ) -> tuple[RoutingSnapshot, list[ChainEntry]]:
        """What the router sees, and the request's prefix-index chain (for recording it)."""
        index = self.prefix_index if NEEDS_PREFIX_INDEX in needs else None
        chain = index.chain(req) if index is not None else []
        # A prompt without shared segments is keyed by its own id: no engine can hold it yet.
        look = index is not None and bool(req.segments)
        precise = NEEDS_PRECISE_PREFIX in needs
        content = req.content() if precise else ()
        prompt = req.prompt_tokens
        views: list[EngineView] = []
        now = self.loop.now_s
        for s in slots:
            e = s.engine
            v = s.view
            if (
                v is None
                or s.view_version != e.state_version
                or s.view_due < now
                or v[4] != s.outstanding
            ):
                # Read anew (request-independent fields) and remember it with the engine's
                # state_version and the time until which it holds.
                waiting, running, used, total, bs, due = e.view(now)
                v = tuple.__new__(  # EngineView(...) without the named tuple's Python __new__
                    EngineView,
                    (e.engine_id, waiting, running, used / total, s.outstanding, used, bs, 0, 0),
                )
                s.view, s.view_version, s.view_due = v, e.state_version, due
            if look or precise:
                matched = index.matched_blocks(v[0], chain) if look and index is not None else 0
                cached = e.cached_prefix_tokens(content, prompt) if precise else 0
                v = tuple.__new__(EngineView, (*v[:7], matched, cached))
            views.append(v)
        snap = RoutingSnapshot(
            now,
            req,
            tuple(views),
            self.rr,
            self.session_engine.get(req.session_id) if req.session_id else None,
            index.total_blocks(chain) if index is not None else 0,
            float(self.rng.random()),
        )
        return snap, chain

    def _after_decision(
        self, req: Request, slot: EngineSlot, needs: frozenset[str], chain: list[ChainEntry]
    ) -> None:
        self.rr += 1
        if NEEDS_PREFIX_INDEX in needs:
            self.prefix_index.record(slot.engine.engine_id, chain)
        if req.session_id:
            self.session_engine[req.session_id] = slot.engine.engine_id

    def send(self, slot: EngineSlot, req: Request, t: float, external: int = 0) -> None:
        self.handle(slot, slot.engine.advance(t))
        slot.engine.add_request(req, t, external)
        slot.outstanding += 1
        self.dirty.add(slot.engine.engine_id)

    def _no_engine(self, tr: TrackedRequest, why: str) -> None:
        limit = self.settings.router_queue_limit
        if why == "no ready engine" and len(self.queue) < limit:
            self.queue.append(tr)
            return
        full = "; router queue full" if why == "no ready engine" and limit else ""
        self._finish(tr, Status.REJECTED, why + full)

    # -- results from engines -----------------------------------------------------------------
    def handle(self, slot: EngineSlot, records: list[RequestRecord]) -> None:
        for rec in records:
            slot.outstanding -= 1
            tr = self.tracked.get(original_id(rec.request_id))
            if tr is None:
                continue
            if rec.finish_reason is FinishReason.ABORT:
                self._reroute(tr, f"engine {slot.engine.engine_id} removed")
            elif tr.phase == "prefill" and rec.request_id.endswith(PREFILL_SUFFIX):
                tr.prefill_cached = rec.cached_tokens
                delay = self.kv_transfer_s(rec.prompt_tokens) if self.kv_transfer_s else 0.0
                loop = self.loop
                loop.post(loop.now_s + delay, TRANSFER, self.transfer_done, tr.req.request_id)
            else:
                self._complete(tr, rec)
        if slot.draining and slot.engine.is_idle():
            self.slots.pop(slot.engine.engine_id, None)
            self.drained_s[slot.engine.engine_id] = self.loop.now_s
            self.slots_changed()

    def abandon(self, slot: EngineSlot, records: list[RequestRecord], why: str) -> None:
        """Requests an engine lost without a chance of retry (its process was killed while it
        streamed them): each ends aborted with ``why``, not rerouted."""
        for rec in records:
            slot.outstanding -= 1
            tr = self.tracked.get(original_id(rec.request_id))
            if tr is not None:
                self._finish(tr, Status.ABORTED, why)

    def transfer_done(self, request_id: str) -> None:
        """The event handler: a prefill's KV cache reached its decode engine."""
        t = self.loop.now_s
        tr = self.tracked.get(request_id)
        if tr is None or tr.decode_engine_id is None:
            return
        self._free_prefill_hold(tr, t)
        dest = self.slots.get(tr.decode_engine_id)
        if dest is None or not dest.routable:
            self._reroute(tr, f"decode engine {tr.decode_engine_id} left during the KV transfer")
            return
        tr.phase, tr.engine_id = "decode", dest.engine.engine_id
        self.send(dest, tr.req, t, external=tr.req.prompt_tokens - 1)

    def _free_prefill_hold(self, tr: TrackedRequest, t: float) -> None:
        """The read is over: the prefill engine frees the blocks it kept for it (an engine
        removed meanwhile took its holds with it)."""
        slot = self.slots.get(tr.prefill_engine_id) if tr.prefill_engine_id else None
        if slot is None:
            return
        engine = slot.engine
        self.handle(slot, engine.advance(t))
        if engine.release_held(tr.req.request_id + PREFILL_SUFFIX, t):
            self.dirty.add(engine.engine_id)

    def _reroute(self, tr: TrackedRequest, why: str) -> None:
        if tr.reroutes >= self.settings.max_reroutes:
            self._finish(tr, Status.ABORTED, f"{why}; gave up after {tr.reroutes} reroutes")
            return
        tr.reroutes += 1
        tr.phase, tr.prefill_engine_id, tr.decode_engine_id = "whole", None, None
        self.route(tr)

    def _complete(self, tr: TrackedRequest, rec: RequestRecord) -> None:
        cached = tr.prefill_cached if tr.prefill_engine_id else rec.cached_tokens
        out = RequestOutcome(
            tr.req.request_id,
            Status.COMPLETED,
            str(rec.finish_reason),
            tr.req.arrival_s,
            rec.engine_id,
            tr.prefill_engine_id,
            tr.req.session_id,
            rec.first_token_s,
            rec.end_s,
            tr.req.prompt_tokens,
            rec.output_tokens,
            cached,
            rec.num_preemptions,
            tr.reroutes,
        )
        self.outcomes.append(out)
        del self.tracked[tr.req.request_id]
        if tr.session is not None:
            session, k = tr.session
            if k + 1 < len(session.turns):
                when = rec.end_s + session.turns[k + 1].think_s
                self.loop.post(when, ARRIVAL, self.next_turn, (session, k + 1))

    def _finish(self, tr: TrackedRequest, status: Status, reason: str) -> None:
        self.outcomes.append(self.outcome(tr, status, reason))
        self.tracked.pop(tr.req.request_id, None)

    def outcome(self, tr: TrackedRequest, status: Status, reason: str) -> RequestOutcome:
        return RequestOutcome(
            tr.req.request_id,
            status,
            reason,
            tr.req.arrival_s,
            tr.engine_id,
            tr.prefill_engine_id,
            tr.req.session_id,
            prompt_tokens=tr.req.prompt_tokens,
            reroutes=tr.reroutes,
        )
