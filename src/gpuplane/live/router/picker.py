"""One routing decision for a live request, with the twin's routers and their state.

The state the simulation's request path keeps (``serving.routing.request_path``) is kept here
the same way: the round-robin counter, the approximate prefix index (llm-d's, fed with what
the router sent where), the session table, and a seeded tie-break stream. Engine views come
from the last scrape plus the router's own count of requests in flight; ``cached_tokens``
(precise prefix, from KV events) is 0: the live router has no KV-event feed, so ``kv-cost``
sees only active blocks.

P/D (``pick_pd``), as the request path splits: with prefill or decode engines present the
policy picks among the decode (and whole-request) engines first, then llm-d's
``prefix-based-pd-decider`` (``serving.routing.pd.should_disaggregate``) splits the request
when the prompt tokens the chosen engine does not hold reach the threshold, and a second
instance of the policy picks the prefill engine for the prefill half (``prefill_request``).
What the decode engine holds is read from the prefix index (llm-d's approximate one: the twin's
request path asks the engine's own cache, which a live router cannot).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuplane.core.rng import RngStreams
from gpuplane.live.router.backends import Backend
from gpuplane.serving.request import Request
from gpuplane.serving.routing.pd import PDSettings, prefill_request, should_disaggregate
from gpuplane.serving.routing.prefix_index import ChainEntry, PrefixIndex
from gpuplane.serving.routing.registry import make_router
from gpuplane.serving.routing.router import (
    NEEDS_PREFIX_INDEX,
    EngineView,
    Role,
    Router,
    RoutingDecision,
    RoutingSnapshot,
)

WHOLE: tuple[Role, ...] = ("both",)
DECODE: tuple[Role, ...] = ("decode", "both")
PREFILL: tuple[Role, ...] = ("prefill",)


@dataclass(frozen=True, slots=True)
class Route:
    """Where a request goes: ``engine`` serves it (whole, or its decode half after
    ``prefill`` computed its prompt); ``engine`` None with the reason when nowhere."""

    engine: Backend | None
    reason: str = ""
    prefill: Backend | None = None


class Picker:
    """Mutable owner of the routing state."""

    def __init__(self, policy: str, seed: int = 0, pd: PDSettings | None = None) -> None:
        self.router = make_router(policy)
        self.prefill_router = make_router(policy)
        self.pd = pd or PDSettings()
        self.index = PrefixIndex()
        self.rr = 0
        self.sessions: dict[str, str] = {}
        self.rng: np.random.Generator = RngStreams(seed).stream("routing-tie-break")

    def _decide(
        self, router: Router, req: Request, ready: list[Backend], now_s: float
    ) -> tuple[RoutingDecision, list[ChainEntry]]:
        use_index = NEEDS_PREFIX_INDEX in router.needs
        chain = self.index.chain(req) if use_index else []
        views = tuple(
            EngineView(
                b.url,
                b.load.num_waiting,
                b.load.num_running,
                b.load.kv_usage,
                b.outstanding,
                b.used_blocks,
                b.load.block_size,
                self.index.matched_blocks(b.url, chain) if use_index else 0,
                0,
            )
            for b in ready
        )
        snap = RoutingSnapshot(
            now_s,
            req,
            views,
            self.rr,
            self.sessions.get(req.session_id) if req.session_id else None,
            self.index.total_blocks(chain) if use_index else 0,
            float(self.rng.random()),
        )
        return router.decide(snap), chain

    def _record(self, router: Router, req: Request, url: str, chain: list[ChainEntry]) -> None:
        self.rr += 1
        if NEEDS_PREFIX_INDEX in router.needs:
            self.index.record(url, chain)
        if req.session_id:
            self.sessions[req.session_id] = url

    @staticmethod
    def _ready(backends: list[Backend], roles: tuple[Role, ...]) -> list[Backend]:
        return sorted((b for b in backends if b.ready and b.role in roles), key=lambda b: b.url)

    def pick_pd(self, req: Request, backends: list[Backend], now_s: float) -> Route:
        """Where ``req`` goes, split into prefill and decode when P/D engines are present."""
        pd = any(b.role != "both" for b in backends)
        ready = self._ready(backends, DECODE if pd else WHOLE)
        if not ready:
            return Route(None, "no ready engine")
        decision, chain = self._decide(self.router, req, ready, now_s)
        if decision.engine_id is None:
            return Route(None, decision.reason)
        dest = next(b for b in ready if b.url == decision.engine_id)
        # What the decode engine holds, before this request is recorded against it.
        held = self.index.matched_blocks(dest.url, self.index.chain(req))
        cached = min(held * self.index.block_size, req.prompt_tokens)
        self._record(self.router, req, dest.url, chain)
        prefills = self._ready(backends, PREFILL) if pd else []
        if not prefills or not should_disaggregate(req.prompt_tokens, cached, self.pd):
            return Route(dest)
        pre = prefill_request(req)
        decision, chain = self._decide(self.prefill_router, pre, prefills, now_s)
        if decision.engine_id is None:
            return Route(dest)
        source = next(b for b in prefills if b.url == decision.engine_id)
        self._record(self.prefill_router, pre, source.url, chain)
        return Route(dest, prefill=source)
