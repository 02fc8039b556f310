"""What a router may read of an engine: its load at one instant, as a read-only value.

Routers decide from this (and from :meth:`Engine.cached_prefix_tokens` for a precise prefix
lookup) instead of reaching into the engine's queues or KV pool, so the same router can be fed
by the simulation or by a live engine's metrics.
"""

from __future__ import annotations

from typing import NamedTuple


class EngineLoad(NamedTuple):
    """An engine's queue and KV pool at one instant (a named tuple: made for every route)."""

    num_waiting: int
    num_running: int
    used_blocks: int
    num_blocks: int
    block_size: int
    valid_until_s: float  # the load cannot change before this time without a state change

    @property
    def kv_usage(self) -> float:
        return self.used_blocks / self.num_blocks
