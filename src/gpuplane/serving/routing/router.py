"""What a router sees and decides: one request, the candidate engines, one choice.

A router is a pure function of a :class:`RoutingSnapshot` (the request and a frozen view of each
candidate engine, as an endpoint picker reads them from its metrics scrape and its own
bookkeeping). State a real router keeps (round-robin counter, routing-history prefix index,
session table) is owned by the caller, offered in the snapshot and updated after the decision.
Ties are broken with ``tie_break``, a number in [0, 1) the caller draws from a seeded stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple, Protocol

from gpuplane.serving.request import Request

Role = Literal["both", "prefill", "decode"]

NEEDS_PREFIX_INDEX = "prefix_index"
NEEDS_PRECISE_PREFIX = "precise_prefix"


class EngineView(NamedTuple):
    """One candidate engine as the router knows it (a tuple: cheap to make per decision)."""

    engine_id: str
    num_waiting: int
    num_running: int
    kv_usage: float
    outstanding: int  # requests this router sent there that have not ended
    used_blocks: int = 0
    block_size: int = 16
    prefix_blocks: int = 0  # approximate: this request's blocks in the routing-history index
    cached_tokens: int = 0  # precise: this request's prefix cached on the engine (KV events)


@dataclass(frozen=True, slots=True)
class RoutingSnapshot:
    t_s: float
    request: Request
    engines: tuple[EngineView, ...]  # ready, accepting, right role; sorted by engine id
    rr_counter: int = 0
    session_engine: str | None = None
    total_blocks: int = 0  # the request's blocks as the prefix index counts them
    tie_break: float = 0.0


@dataclass(frozen=True, slots=True)
class RoutingDecision:
    engine_id: str | None
    reason: str


class Router(Protocol):
    """Picks an engine for a request."""

    # Read-only members: routers are frozen dataclasses.
    @property
    def name(self) -> str: ...

    @property
    def needs(self) -> frozenset[str]:  # what the caller must fill in: prefix index, precise prefix
        ...

    def decide(self, snap: RoutingSnapshot) -> RoutingDecision: ...


def pick_tied(views: list[EngineView], tie_break: float) -> EngineView:
    """One of equally good engines, chosen by ``tie_break`` (llm-d's max-score picker is random
    among ties)."""
    return views[min(int(tie_break * len(views)), len(views) - 1)]


def no_engine() -> RoutingDecision:
    return RoutingDecision(None, "no ready engine")
