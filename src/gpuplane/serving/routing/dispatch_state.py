"""The routing state a dispatcher's caller keeps, the same in the twin and the live router.

A real router keeps a round-robin counter, its approximate prefix index (llm-d's, fed with what
it sent where), a session table and a seeded tie-break stream. :class:`DispatchState` owns them:
it offers them to :func:`~gpuplane.serving.routing.dispatch.dispatch` as a frozen
:class:`~gpuplane.serving.routing.dispatch.DispatchBook` and applies the :class:`Route` that
came back (each decision moves the counter one further, records the prompt's prefix against the
engine when the router reads the index, and puts the session on the engine). The twin's
request path and the live picker both route through one of these, so their state moves alike.
"""

from __future__ import annotations

import numpy as np

from gpuplane.core.rng import RngStreams
from gpuplane.serving.request import Request
from gpuplane.serving.routing.dispatch import DispatchBook, DispatchPolicy, Route
from gpuplane.serving.routing.pd import prefill_request
from gpuplane.serving.routing.prefix_index import ChainEntry, PrefixIndex
from gpuplane.serving.routing.router import NEEDS_PREFIX_INDEX

TIE_BREAK_STREAM = "routing-tie-break"


class TieBreaks:
    """A seeded stream of numbers in [0, 1), read two ahead: what is not consumed is offered
    again, so the numbers used are those one draw per decision would have given."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self._ahead: list[float] = []

    def next_two(self) -> tuple[float, float]:
        ahead = self._ahead
        while len(ahead) < 2:
            ahead.append(float(self.rng.random()))
        return ahead[0], ahead[1]

    def consume(self, n: int) -> None:
        del self._ahead[:n]


def uses_index(policy: DispatchPolicy) -> bool:
    return NEEDS_PREFIX_INDEX in policy.needs or NEEDS_PREFIX_INDEX in policy.prefill_needs


class DispatchState:
    """Mutable owner of the routing state of one router (the twin's or the live one)."""

    def __init__(self, seed: int = 0, prefix_index: PrefixIndex | None = None) -> None:
        self.index = prefix_index or PrefixIndex()
        self.rr = 0
        self.sessions: dict[str, str] = {}
        self.ties = TieBreaks(RngStreams(seed).stream(TIE_BREAK_STREAM))

    def chain(self, req: Request, policy: DispatchPolicy) -> list[ChainEntry]:
        """The request's prefix-index entries (empty when no router of the policy reads it)."""
        return self.index.chain(req) if uses_index(policy) else []

    def prefix_blocks(self, engine_id: str, req: Request, chain: list[ChainEntry]) -> int:
        """The request's blocks the index holds for the engine (a prompt without shared
        segments is keyed by its own id: no engine can hold it yet)."""
        if not chain or not req.segments:
            return 0
        return self.index.matched_blocks(engine_id, chain)

    def estimated_cached_tokens(self, engine_id: str, req: Request, chain: list[ChainEntry]) -> int:
        """What the engine holds of the prompt by the index: a router without KV events knows
        no better (llm-d's approximate prefix scorer)."""
        if not chain:
            return 0
        held = self.index.matched_blocks(engine_id, chain)
        return min(held * self.index.block_size, req.prompt_tokens)

    def book(
        self, req: Request, now_s: float, policy: DispatchPolicy, chain: list[ChainEntry]
    ) -> DispatchBook:
        total = self.index.total_blocks(chain) if chain else 0
        needs, pre_needs = policy.needs, policy.prefill_needs
        return DispatchBook(
            now_s,
            self.rr,
            self.sessions.get(req.session_id) if req.session_id else None,
            total if NEEDS_PREFIX_INDEX in needs else 0,
            # The prefill half's chain has the same blocks (prefill_request keeps the prompt).
            total if NEEDS_PREFIX_INDEX in pre_needs else 0,
            self.ties.next_two(),
        )

    def apply(
        self, req: Request, route: Route, policy: DispatchPolicy, chain: list[ChainEntry]
    ) -> None:
        """The route was taken: the state moves as the router's bookkeeping does."""
        self.ties.consume(route.num_tie_breaks)
        if route.engine_id is None:
            return
        self._record(req, route.engine_id, NEEDS_PREFIX_INDEX in policy.needs, chain)
        if route.prefill_engine_id is not None:
            pre = prefill_request(req)
            record = NEEDS_PREFIX_INDEX in policy.prefill_needs
            self._record(pre, route.prefill_engine_id, record, self.chain(pre, policy))

    def _record(self, req: Request, engine_id: str, record: bool, chain: list[ChainEntry]) -> None:
        self.rr += 1
        if record:
            self.index.record(engine_id, chain)
        if req.session_id:
            self.sessions[req.session_id] = engine_id

    def forget(self, engine_id: str) -> None:
        """The engine is gone (llm-d drops inactive pods from the index)."""
        self.index.forget(engine_id)
