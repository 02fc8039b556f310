"""Session affinity: a consistent hash ring on the session id (vLLM production-stack ``session``).

The production-stack router hashes a session header (or body key) onto a ring of the current
endpoints, so a session keeps going to the same engine (where its conversation is cached) and
adding or removing an engine moves only the sessions that hashed near it. Requests without a
session go to the least loaded engine (production-stack uses the lowest request rate; here the
fewest outstanding requests).
"""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass, field
from functools import lru_cache

from gpuplane.serving.routing.basic import LeastOutstandingRouter
from gpuplane.serving.routing.router import RoutingDecision, RoutingSnapshot, no_engine

VIRTUAL_NODES = 100


def _hash(key: str) -> int:
    return int.from_bytes(hashlib.md5(key.encode("utf-8"), usedforsecurity=False).digest()[:8])


@lru_cache(maxsize=256)
def _ring(engine_ids: tuple[str, ...], vnodes: int) -> tuple[list[int], list[str]]:
    points = sorted((_hash(f"{eid}#{i}"), eid) for eid in engine_ids for i in range(vnodes))
    return [h for h, _ in points], [eid for _, eid in points]


def ring_owner(session_id: str, engine_ids: tuple[str, ...], vnodes: int = VIRTUAL_NODES) -> str:
    """The engine that owns ``session_id`` on the ring of ``engine_ids``."""
    hashes, owners = _ring(engine_ids, vnodes)
    i = bisect.bisect_left(hashes, _hash(session_id))
    return owners[i % len(owners)]


@dataclass(frozen=True)
class SessionAffinityRouter:
    name: str = "session"
    needs: frozenset[str] = field(default_factory=frozenset)
    virtual_nodes: int = VIRTUAL_NODES

    def decide(self, snap: RoutingSnapshot) -> RoutingDecision:
        if not snap.engines:
            return no_engine()
        sid = snap.request.session_id
        if sid is None:
            return LeastOutstandingRouter().decide(snap)
        ids = tuple(v.engine_id for v in snap.engines)
        return RoutingDecision(ring_owner(sid, ids, self.virtual_nodes), "session hash ring")
