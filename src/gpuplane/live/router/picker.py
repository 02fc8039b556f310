"""One routing decision for a live request: the twin's dispatcher over the router's backends.

The decision is ``serving.routing.dispatch.dispatch``, the one the twin's request path makes,
and the routing state (round-robin counter, llm-d's approximate prefix index fed with what the
router sent where, session table, seeded tie-break stream) is a
``serving.routing.dispatch_state.DispatchState``, as in the twin. This module only builds the
engine views from what a live router knows: each backend's last ``/metrics`` scrape, its
readiness (``/health``), its ``max_model_len`` (``/v1/models``; unknown: no limit), the
router's own count of requests in flight, and from the prefix index what each engine holds of
the prompt (``cached_tokens``: the live router has no KV-event feed, so this is llm-d's
approximate figure; it feeds the P/D split, and ``kv-cost`` reads it as Dynamo's approximate
mode would).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from gpuplane.live.router.backends import Backend
from gpuplane.serving.request import Request
from gpuplane.serving.routing.dispatch import (
    DispatchPolicy,
    EngineState,
    Refusal,
    Route,
    dispatch,
)
from gpuplane.serving.routing.dispatch_state import DispatchState
from gpuplane.serving.routing.pd import PDSettings
from gpuplane.serving.routing.prefix_index import ChainEntry, PrefixIndex
from gpuplane.serving.routing.registry import make_router
from gpuplane.serving.routing.router import NEEDS_PREFIX_INDEX, EngineView

# A backend whose /v1/models gave no max_model_len takes any prompt (the engine will say).
UNKNOWN_MAX_MODEL_LEN = sys.maxsize


@dataclass(frozen=True, slots=True)
class LiveRoute:
    """The dispatcher's route with its backends: ``engine`` serves the request (whole, or its
    decode half after ``prefill`` computed its prompt); ``engine`` None when nowhere."""

    decision: Route
    engine: Backend | None = None
    prefill: Backend | None = None

    @property
    def reason(self) -> str:
        return self.decision.reason

    @property
    def refusal(self) -> Refusal | None:
        return self.decision.refusal


class Picker:
    """Mutable owner of the routing state."""

    def __init__(self, policy: str, seed: int = 0, pd: PDSettings | None = None) -> None:
        self.policy = DispatchPolicy(make_router(policy), make_router(policy), pd or PDSettings())
        self.state = DispatchState(seed)

    @property
    def index(self) -> PrefixIndex:
        return self.state.index

    def engine_states(
        self, req: Request, backends: list[Backend], chain: list[ChainEntry]
    ) -> tuple[EngineState, ...]:
        """The backends as the dispatcher sees them, sorted by URL."""
        state, policy = self.state, self.policy
        look_dec = NEEDS_PREFIX_INDEX in policy.needs
        look_pre = NEEDS_PREFIX_INDEX in policy.prefill_needs
        out = []
        for b in sorted(backends, key=lambda b: b.url):
            load = b.load
            look = look_pre if b.role == "prefill" else look_dec
            blocks = state.prefix_blocks(b.url, req, chain) if look else 0
            view = EngineView(
                b.url,
                load.num_waiting,
                load.num_running,
                load.kv_usage,
                b.outstanding,
                b.used_blocks,
                load.block_size,
                blocks,
                state.estimated_cached_tokens(b.url, req, chain),
            )
            max_len = b.max_model_len or UNKNOWN_MAX_MODEL_LEN
            out.append(EngineState(view, b.role, max_len, b.ready))
        return tuple(out)

    def pick_pd(self, req: Request, backends: list[Backend], now_s: float) -> LiveRoute:
        """Where ``req`` goes, split into prefill and decode when P/D engines are present."""
        policy, state = self.policy, self.state
        chain = state.chain(req, policy)
        engines = self.engine_states(req, backends, chain)
        route = dispatch(req, engines, state.book(req, now_s, policy, chain), policy)
        state.apply(req, route, policy, chain)
        by_url = {b.url: b for b in backends}
        engine = by_url[route.engine_id] if route.engine_id is not None else None
        prefill = by_url[route.prefill_engine_id] if route.prefill_engine_id is not None else None
        return LiveRoute(route, engine, prefill)
