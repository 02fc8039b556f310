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

from gpuplane.core.kernel import EventLoop
from gpuplane.serving.engine.live import RequestRecord
from gpuplane.serving.request import FinishReason, Request
from gpuplane.serving.routing.dispatch import (
    DispatchPolicy,
    EngineState,
    dispatch,
    room_needed,
)
from gpuplane.serving.routing.dispatch_state import DispatchState
from gpuplane.serving.routing.engine_slot import EngineSlot
from gpuplane.serving.routing.outcome import RequestOutcome, Status
from gpuplane.serving.routing.pd import PREFILL_SUFFIX, original_id, prefill_request
from gpuplane.serving.routing.prefix_index import ChainEntry, PrefixIndex
from gpuplane.serving.routing.priority import ServingPriority
from gpuplane.serving.routing.router import (
    NEEDS_PRECISE_PREFIX,
    NEEDS_PREFIX_INDEX,
    EngineView,
    Router,
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
        self.settings = settings
        self.kv_transfer_s = kv_transfer_s
        self.policy = DispatchPolicy(router, prefill_router or router, settings.pd)
        # The round-robin counter, prefix index, session table and tie-break stream, kept as
        # the live router keeps them.
        self.state = DispatchState(settings.seed, prefix_index)
        self.slots: dict[str, EngineSlot] = {}
        self.dirty: set[str] = set()  # engines whose queue changed since they last planned
        self.tracked: dict[str, TrackedRequest] = {}
        self.outcomes: list[RequestOutcome] = []
        self.queue: deque[TrackedRequest] = deque()  # held while no engine is ready
        self.num_arrived = 0
        self.pd: bool | None = None  # derived from the set of engines (see slots_changed)
        # Draining engines that went idle and left, and when (a terminating pod's end).
        self.drained_s: dict[str, float] = {}

    @property
    def router(self) -> Router:
        return self.policy.router

    @property
    def prefill_router(self) -> Router:
        return self.policy.prefill_router

    @property
    def prefix_index(self) -> PrefixIndex:
        return self.state.index

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

    def slots_changed(self) -> None:
        """Forget what was derived from the set of engines."""
        self.pd = None

    def pd_mode(self) -> bool:
        if self.pd is None:
            self.pd = any(s.role != "both" for s in self.slots.values())
        return self.pd

    def route(self, tr: TrackedRequest) -> None:
        """Route with the dispatcher (``dispatch``) the live router uses, then apply it."""
        req, t = tr.req, self.loop.now_s
        policy, state = self.policy, self.state
        chain = state.chain(req, policy)
        engines = self._engine_states(req, chain)
        route = dispatch(req, engines, state.book(req, t, policy, chain), policy)
        state.apply(req, route, policy, chain)
        if route.engine_id is None:
            self._no_engine(tr, route.reason)
            return
        dest = self.slots[route.engine_id]
        if route.prefill_engine_id is not None:
            self._split(tr, dest, self.slots[route.prefill_engine_id])
            return
        tr.phase, tr.engine_id = "whole", dest.engine.engine_id
        self.send(dest, req, t)

    def _split(self, tr: TrackedRequest, dest: EngineSlot, pslot: EngineSlot) -> None:
        pre = prefill_request(tr.req)
        tr.phase = "prefill"
        tr.prefill_engine_id = pslot.engine.engine_id
        tr.decode_engine_id = dest.engine.engine_id
        # NixlConnector: the prefill engine keeps the prompt's blocks until the decode engine
        # has read them (transfer_done frees them).
        pslot.engine.hold_on_finish.add(pre.request_id)
        self.send(pslot, pre, self.loop.now_s)

    def _engine_states(self, req: Request, chain: list[ChainEntry]) -> tuple[EngineState, ...]:
        """Every engine as the dispatcher sees it. Only the engines that can take the request
        are read (an engine that cannot is dropped by the dispatcher before a router reads a
        view, so its view is left empty)."""
        pd = self.pd_mode()
        needs, pre_needs = self.policy.needs, self.policy.prefill_needs
        prompt = req.prompt_tokens
        need, pre_need = room_needed(req), prompt + 1
        # What an engine holds of the prompt, for a router that reads it (precise prefix: the
        # engine's cache, as KV events tell llm-d) and in P/D mode for the split on the decode
        # engine (prefix-based-pd-decider). A router without KV events knows only its prefix
        # index, and so does the decider behind it: the live router's estimate, not the cache.
        ask = NEEDS_PRECISE_PREFIX in needs
        estimate = pd and not ask
        ask_pre = pd and NEEDS_PRECISE_PREFIX in pre_needs
        look = bool(chain) and bool(req.segments)
        look_dec = look and NEEDS_PREFIX_INDEX in needs
        look_pre = look and NEEDS_PREFIX_INDEX in pre_needs
        content = req.content() if ask else ()
        pre_content = prefill_request(req).content() if ask_pre else ()
        index, now = self.state.index, self.loop.now_s
        out: list[EngineState] = []
        for s in self.slots.values():
            e, role = s.engine, s.role
            max_len = e.config.max_model_len
            prefill = role == "prefill"
            routable = s.ready and s.accepting
            if not routable or (pre_need if prefill else need) > max_len:
                empty = EngineView(e.engine_id, 0, 0, 0.0, s.outstanding)
                out.append(tuple.__new__(EngineState, (empty, role, max_len, routable)))
                continue
            v, st = s.view, s.state
            if (
                v is None
                or st is None
                or s.view_version != e.state_version
                or s.view_due < now
                or v[4] != s.outstanding
            ):
                # Read anew (request-independent fields; inlined, as this runs for every
                # engine on every request) and remembered with the state_version and the
                # time until which it holds.
                waiting, running, used, total, bs, due = e.view(now)
                v = tuple.__new__(  # EngineView(...) without the named tuple's __new__
                    EngineView,
                    (e.engine_id, waiting, running, used / total, s.outstanding, used, bs, 0, 0),
                )
                st = tuple.__new__(EngineState, (v, role, max_len, True))
                s.view, s.state, s.view_version, s.view_due = v, st, e.state_version, due
            if prefill:
                blocks = index.matched_blocks(v[0], chain) if look_pre else 0
                cached = e.cached_prefix_tokens(pre_content, prompt) if ask_pre else 0
            else:
                blocks = index.matched_blocks(v[0], chain) if look_dec else 0
                if ask:
                    cached = e.cached_prefix_tokens(content, prompt)
                elif estimate:
                    cached = self.state.estimated_cached_tokens(v[0], req, chain)
                else:
                    cached = 0
            if blocks or cached:  # else the request-independent view says it all (0 and 0)
                v = tuple.__new__(EngineView, (*v[:7], blocks, cached))
                st = tuple.__new__(EngineState, (v, role, max_len, True))
            out.append(st)
        return tuple(out)

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
