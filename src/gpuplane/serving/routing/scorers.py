"""KV- and prefix-aware routing as the llm-d inference scheduler (EPP) and NVIDIA Dynamo do it.

llm-d (``llm-d-inference-scheduler``; the Helm chart's default profile): each scorer gives every
candidate a score in [0, 1], the weighted sum picks the engine (``max-score`` picker, random among
ties). Default weights: queue 2, KV-cache utilization 2, prefix cache 3.

- ``queue-scorer``: the waiting queue, min-max normalised (shortest queue 1, longest 0; all
  equal: 1).
- ``kv-cache-utilization-scorer``: ``1 - kv_usage``.
- ``prefix-cache-scorer``: matched blocks / request blocks, from the router's own index of
  what it sent where (approximate), or with ``precise`` from the engines' cache state
  (``precise-prefix-cache-scorer``, fed by vLLM KV events).

Dynamo's KV router (``KvCostRouter``): ``cost = overlap_weight x prefill_blocks +
decode_blocks`` with prefill blocks the request's uncached input blocks on that worker and
decode blocks the worker's active blocks; the lowest cost wins (temperature 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuplane.serving.routing.router import (
    NEEDS_PRECISE_PREFIX,
    NEEDS_PREFIX_INDEX,
    EngineView,
    RoutingDecision,
    RoutingSnapshot,
    no_engine,
    pick_tied,
)

DEFAULT_WEIGHTS = {"queue": 2.0, "kv-cache-utilization": 2.0, "prefix-cache": 3.0}


def queue_scores(views: tuple[EngineView, ...]) -> list[float]:
    queues = [v.num_waiting for v in views]
    lo, hi = min(queues), max(queues)
    if hi == lo:
        return [1.0] * len(views)
    return [(hi - q) / (hi - lo) for q in queues]


def kv_scores(views: tuple[EngineView, ...]) -> list[float]:
    return [1.0 - v.kv_usage for v in views]


def prefix_scores(snap: RoutingSnapshot, precise: bool) -> list[float]:
    if precise:
        prompt = snap.request.prompt_tokens
        return [min(v.cached_tokens / prompt, 1.0) for v in snap.engines]
    if snap.total_blocks <= 0:
        return [0.0] * len(snap.engines)
    return [min(v.prefix_blocks / snap.total_blocks, 1.0) for v in snap.engines]


@dataclass(frozen=True)
class WeightedScorerRouter:
    """llm-d's scheduling profile: weighted scorers and the max-score picker."""

    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    precise: bool = False
    name: str = "llm-d"

    @property
    def needs(self) -> frozenset[str]:
        if self.weights.get("prefix-cache", 0.0) == 0.0:
            return frozenset()
        return frozenset({NEEDS_PRECISE_PREFIX if self.precise else NEEDS_PREFIX_INDEX})

    def scores(self, snap: RoutingSnapshot) -> list[float]:
        total = [0.0] * len(snap.engines)
        for name, weight in self.weights.items():
            if weight:
                # Same sums as the scorer functions above, in the same order, without the
                # per-call closures and lists (this runs once per routed request).
                if name == "queue":
                    _add_queue(total, weight, snap.engines)
                elif name == "kv-cache-utilization":
                    for i, v in enumerate(snap.engines):
                        total[i] += weight * (1.0 - v.kv_usage)
                elif name == "prefix-cache":
                    for i, s in enumerate(prefix_scores(snap, self.precise)):
                        total[i] += weight * s
                else:
                    raise KeyError(name)
        return total

    def decide(self, snap: RoutingSnapshot) -> RoutingDecision:
        if not snap.engines:
            return no_engine()
        scores = self.scores(snap)
        best = max(scores)
        floor = best - 1e-12
        tied = [v for v, s in zip(snap.engines, scores, strict=True) if s >= floor]
        return RoutingDecision(pick_tied(tied, snap.tie_break).engine_id, f"score {best:.3f}")


def _add_queue(total: list[float], weight: float, views: tuple[EngineView, ...]) -> None:
    """``weight x queue_scores(views)`` added to ``total``."""
    queues = [v.num_waiting for v in views]
    lo, hi = min(queues), max(queues)
    if hi == lo:
        for i in range(len(total)):
            total[i] += weight * 1.0
        return
    for i, q in enumerate(queues):
        total[i] += weight * ((hi - q) / (hi - lo))


@dataclass(frozen=True)
class KvCostRouter:
    """Dynamo's KV router cost: overlap-weighted uncached prefill blocks plus active blocks."""

    overlap_weight: float = 1.0
    name: str = "dynamo-kv"
    needs: frozenset[str] = frozenset({NEEDS_PRECISE_PREFIX})

    def decide(self, snap: RoutingSnapshot) -> RoutingDecision:
        if not snap.engines:
            return no_engine()
        prompt = snap.request.prompt_tokens
        costs = [
            self.overlap_weight * max(prompt - v.cached_tokens, 0) / v.block_size + v.used_blocks
            for v in snap.engines
        ]
        low = min(costs)
        tied = [v for v, c in zip(snap.engines, costs, strict=True) if c <= low + 1e-12]
        return RoutingDecision(pick_tied(tied, snap.tie_break).engine_id, f"cost {low:.1f}")
