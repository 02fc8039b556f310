"""Load-only routers: round robin and least outstanding requests.

- Round robin (vLLM production-stack ``roundrobin``): the engines sorted by name, the ``k``-th
  request goes to engine ``k mod n``.
- Least outstanding requests (AIBrix ``least-request``, Vidur's ``lor``): the engine with the
  fewest requests this router has sent and not yet seen end; ties at random.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuplane.serving.routing.router import (
    RoutingDecision,
    RoutingSnapshot,
    no_engine,
    pick_tied,
)


@dataclass(frozen=True)
class RoundRobinRouter:
    name: str = "round-robin"
    needs: frozenset[str] = field(default_factory=frozenset)

    def decide(self, snap: RoutingSnapshot) -> RoutingDecision:
        if not snap.engines:
            return no_engine()
        view = snap.engines[snap.rr_counter % len(snap.engines)]
        return RoutingDecision(view.engine_id, "round robin")


@dataclass(frozen=True)
class LeastOutstandingRouter:
    name: str = "least-outstanding"
    needs: frozenset[str] = field(default_factory=frozenset)

    def decide(self, snap: RoutingSnapshot) -> RoutingDecision:
        if not snap.engines:
            return no_engine()
        low = min(v.outstanding for v in snap.engines)
        best = [v for v in snap.engines if v.outstanding == low]
        return RoutingDecision(pick_tied(best, snap.tie_break).engine_id, "fewest outstanding")
