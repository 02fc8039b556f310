"""One routing decision for a live request, with the twin's routers and their state.

The state the simulation's request path keeps (``serving.routing.request_path``) is kept here
the same way: the round-robin counter, the approximate prefix index (llm-d's, fed with what
the router sent where), the session table, and a seeded tie-break stream. Engine views come
from the last scrape plus the router's own count of requests in flight; ``cached_tokens``
(precise prefix, from KV events) is 0: the live router has no KV-event feed, so ``kv-cost``
sees only active blocks.
"""

from __future__ import annotations

import numpy as np

from gpuplane.core.rng import RngStreams
from gpuplane.k8s.router.backends import Backend
from gpuplane.serving.request import Request
from gpuplane.serving.routing.prefix_index import PrefixIndex
from gpuplane.serving.routing.registry import make_router
from gpuplane.serving.routing.router import (
    NEEDS_PREFIX_INDEX,
    EngineView,
    RoutingDecision,
    RoutingSnapshot,
)


class Picker:
    """Mutable owner of the routing state."""

    def __init__(self, policy: str, seed: int = 0) -> None:
        self.router = make_router(policy)
        self.index = PrefixIndex()
        self.rr = 0
        self.sessions: dict[str, str] = {}
        self.rng: np.random.Generator = RngStreams(seed).stream("routing-tie-break")

    def pick(self, req: Request, backends: list[Backend], now_s: float) -> RoutingDecision:
        """The engine for ``req`` among the ready ``backends``; records the choice."""
        ready = sorted((b for b in backends if b.ready), key=lambda b: b.url)
        if not ready:
            return RoutingDecision(None, "no ready engine")
        use_index = NEEDS_PREFIX_INDEX in self.router.needs
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
        decision = self.router.decide(snap)
        if decision.engine_id is not None:
            self.rr += 1
            if use_index:
                self.index.record(decision.engine_id, chain)
            if req.session_id:
                self.sessions[req.session_id] = decision.engine_id
        return decision
