"""The path of one request through the serving system: route, dispatch, split, finish, reroute.

Split out of :mod:`simulation` (which owns time and engines); the attributes used here are set
by :class:`~gpuplane.serving.routing.simulation.ServingSimulation`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from gpuplane.serving.engine.live import RequestRecord
from gpuplane.serving.engine.request import FinishReason, Request
from gpuplane.serving.routing.outcome import RequestOutcome, Status
from gpuplane.serving.routing.pd import (
    PREFILL_SUFFIX,
    original_id,
    prefill_request,
    should_disaggregate,
)
from gpuplane.serving.routing.prefix_index import ChainEntry, PrefixIndex
from gpuplane.serving.routing.router import (
    NEEDS_PRECISE_PREFIX,
    NEEDS_PREFIX_INDEX,
    EngineView,
    Role,
    Router,
    RoutingSnapshot,
)

if TYPE_CHECKING:
    import numpy as np

    from gpuplane.serving.routing.simulation import EngineSlot, SimulationSettings, _Tracked
    from gpuplane.serving.traffic.sessions import Session


class RequestFlow(ABC):
    router: Router
    prefill_router: Router
    settings: SimulationSettings
    kv_transfer_s: Callable[[int], float] | None
    prefix_index: PrefixIndex
    now_s: float
    _slots: dict[str, EngineSlot]
    _tracked: dict[str, _Tracked]
    _outcomes: list[RequestOutcome]
    _queue: deque[_Tracked]
    _num_arrived: int
    _rr: int
    _session_engine: dict[str, str]
    _rng: np.random.Generator
    _routable: dict[tuple[Role, ...], tuple[list[EngineSlot], int]]
    _pd: bool | None

    @abstractmethod
    def _push(self, t: float, prio: int, kind: str, payload: object) -> None:
        """Schedule an event (the simulation's event heap)."""

    @abstractmethod
    def _mark(self, slot: EngineSlot) -> None:
        """Note that an engine's state changed and it must plan its next step."""

    # -- arrival and routing ------------------------------------------------------------------
    def _arrive(self, req: Request, session: tuple[Session, int] | None) -> None:
        from gpuplane.serving.routing.simulation import _Tracked

        if req.request_id in self._tracked:
            raise ValueError(f"request id {req.request_id} is already in flight")
        self._num_arrived += 1
        tr = _Tracked(req, session)
        self._tracked[req.request_id] = tr
        self._route(tr)

    def _candidates(self, roles: tuple[Role, ...], req: Request) -> tuple[list[EngineSlot], str]:
        """Routable engines of these roles that can serve ``req``, or why there are none."""
        cached = self._routable.get(roles)
        if cached is None:
            # Kept until an engine is added, removed, becomes ready or stops accepting.
            found = [s for s in self._slots.values() if s.routable and s.role in roles]
            shortest = min((s.engine.config.max_model_len for s in found), default=0)
            cached = self._routable[roles] = (found, shortest)
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

    def _slots_changed(self) -> None:
        """Forget what was derived from the set of engines and their readiness."""
        self._routable.clear()
        self._pd = None

    def _pd_mode(self) -> bool:
        if self._pd is None:
            self._pd = any(s.role != "both" for s in self._slots.values())
        return self._pd

    def _route(self, tr: _Tracked) -> None:
        req, t = tr.req, self.now_s
        pd = self._pd_mode()
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
        dest = self._slots[decision.engine_id]
        self._after_decision(req, dest, needs, chain)
        if pd and self._try_split(tr, dest):
            return
        tr.phase, tr.engine_id = "whole", dest.engine.engine_id
        self._send(dest, req, t)

    def _try_split(self, tr: _Tracked, dest: EngineSlot) -> bool:
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
        pslot = self._slots[decision.engine_id]
        self._after_decision(pre, pslot, needs, chain)
        tr.phase = "prefill"
        tr.prefill_engine_id = pslot.engine.engine_id
        tr.decode_engine_id = dest.engine.engine_id
        self._send(pslot, pre, self.now_s)
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
        now = self.now_s
        for s in slots:
            e = s.engine
            v = s.view
            if (
                v is None
                or s.view_version != e.state_version
                or s.view_due < now
                or v[4] != s.outstanding
            ):
                v = _fresh_view(s, now)
            if look or precise:
                matched = index.matched_blocks(v[0], chain) if look and index is not None else 0
                cached = e.cached_prefix_tokens(content, prompt) if precise else 0
                v = tuple.__new__(EngineView, (*v[:7], matched, cached))
            views.append(v)
        snap = RoutingSnapshot(
            now,
            req,
            tuple(views),
            self._rr,
            self._session_engine.get(req.session_id) if req.session_id else None,
            index.total_blocks(chain) if index is not None else 0,
            float(self._rng.random()),
        )
        return snap, chain

    def _after_decision(
        self, req: Request, slot: EngineSlot, needs: frozenset[str], chain: list[ChainEntry]
    ) -> None:
        self._rr += 1
        if NEEDS_PREFIX_INDEX in needs:
            self.prefix_index.record(slot.engine.engine_id, chain)
        if req.session_id:
            self._session_engine[req.session_id] = slot.engine.engine_id

    def _send(self, slot: EngineSlot, req: Request, t: float, external: int = 0) -> None:
        self._handle(slot, slot.engine.advance(t))
        slot.engine.add_request(req, t, external)
        slot.outstanding += 1
        self._mark(slot)

    def _no_engine(self, tr: _Tracked, why: str) -> None:
        limit = self.settings.router_queue_limit
        if why == "no ready engine" and len(self._queue) < limit:
            self._queue.append(tr)
            return
        full = "; router queue full" if why == "no ready engine" and limit else ""
        self._finish(tr, Status.REJECTED, why + full)

    # -- results from engines -----------------------------------------------------------------
    def _handle(self, slot: EngineSlot, records: list[RequestRecord]) -> None:
        for rec in records:
            slot.outstanding -= 1
            tr = self._tracked.get(original_id(rec.request_id))
            if tr is None:
                continue
            if rec.finish_reason is FinishReason.ABORT:
                self._reroute(tr, f"engine {slot.engine.engine_id} removed")
            elif tr.phase == "prefill" and rec.request_id.endswith(PREFILL_SUFFIX):
                tr.prefill_cached = rec.cached_tokens
                delay = self.kv_transfer_s(rec.prompt_tokens) if self.kv_transfer_s else 0.0
                self._push(self.now_s + delay, 20, "transfer", tr.req.request_id)
            else:
                self._complete(tr, rec)
        if slot.draining and slot.engine.is_idle():
            self._slots.pop(slot.engine.engine_id, None)
            self._slots_changed()

    def _transfer_done(self, request_id: str, t: float) -> None:
        tr = self._tracked.get(request_id)
        if tr is None or tr.decode_engine_id is None:
            return
        dest = self._slots.get(tr.decode_engine_id)
        if dest is None or not dest.routable:
            self._reroute(tr, f"decode engine {tr.decode_engine_id} left during the KV transfer")
            return
        tr.phase, tr.engine_id = "decode", dest.engine.engine_id
        self._send(dest, tr.req, t, external=tr.req.prompt_tokens - 1)

    def _reroute(self, tr: _Tracked, why: str) -> None:
        if tr.reroutes >= self.settings.max_reroutes:
            self._finish(tr, Status.ABORTED, f"{why}; gave up after {tr.reroutes} reroutes")
            return
        tr.reroutes += 1
        tr.phase, tr.prefill_engine_id, tr.decode_engine_id = "whole", None, None
        self._route(tr)

    def _complete(self, tr: _Tracked, rec: RequestRecord) -> None:
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
        self._outcomes.append(out)
        del self._tracked[tr.req.request_id]
        if tr.session is not None:
            session, k = tr.session
            if k + 1 < len(session.turns):
                when = rec.end_s + session.turns[k + 1].think_s
                self._push(when, 10, "turn", (session, k + 1))

    def _finish(self, tr: _Tracked, status: Status, reason: str) -> None:
        self._outcomes.append(self._outcome(tr, status, reason))
        self._tracked.pop(tr.req.request_id, None)

    def _outcome(self, tr: _Tracked, status: Status, reason: str) -> RequestOutcome:
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


def _fresh_view(slot: EngineSlot, now: float) -> EngineView:
    """Read the slot's engine as a router sees it at ``now`` (request-independent fields) and
    remember it, with the engine's ``state_version`` and the time until which it stays valid."""
    e = slot.engine
    waiting, running, used, total, bs, due = e.view(now)
    view = tuple.__new__(  # EngineView(...) without the named tuple's Python-level __new__
        EngineView,
        (e.engine_id, waiting, running, used / total, slot.outstanding, used, bs, 0, 0),
    )
    slot.view, slot.view_version, slot.view_due = view, e.state_version, due
    return view
