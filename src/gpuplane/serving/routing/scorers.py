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
    total = snap.total_blocks
    if total <= 0:
        return [0.0] * len(snap.engines)
    # No blocks matched (the usual case for prompts without shared segments) scores 0.0.
    return [min(v[7] / total, 1.0) if v[7] else 0.0 for v in snap.engines]


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
        active = [(name, weight) for name, weight in self.weights.items() if weight]
        if [name for name, _ in active] == list(DEFAULT_WEIGHTS):
            return self._default_scores(snap, active[0][1], active[1][1], active[2][1])
        views = snap.engines
        total = [0.0] * len(views)
        # The scorer functions above, fused: the same terms added in the same order, one list
        # per scorer instead of closures and index updates (this runs once per request).
        for name, weight in self.weights.items():
            if not weight:
                continue
            if name == "queue":
                total = _add_queue(total, weight, views)
            elif name == "kv-cache-utilization":
                total = [t + weight * (1.0 - v[3]) for t, v in zip(total, views, strict=True)]
            elif name == "prefix-cache":
                prefix = prefix_scores(snap, self.precise)
                total = [t + weight * p for t, p in zip(total, prefix, strict=True)]
            else:
                raise KeyError(name)
        return total

    def _default_scores(
        self, snap: RoutingSnapshot, queue: float, kv: float, prefix: float
    ) -> list[float]:
        """``scores`` for the three default scorers in their default order, one engine at a
        time: each engine's sum is the same three terms added in the same order."""
        views = snap.engines
        waiting = [v[1] for v in views]
        lo, hi = min(waiting), max(waiting)
        span = hi - lo
        out = []
        if self.precise or snap.total_blocks <= 0:
            for v, p in zip(views, prefix_scores(snap, self.precise), strict=True):
                q = queue * ((hi - v[1]) / span) if span else queue * 1.0
                out.append(((0.0 + q) + kv * (1.0 - v[3])) + prefix * p)
            return out
        blocks = snap.total_blocks
        for v in views:  # prefix_scores inline: matched blocks over the request's blocks
            q = queue * ((hi - v[1]) / span) if span else queue * 1.0
            p = min(v[7] / blocks, 1.0) if v[7] else 0.0
            out.append(((0.0 + q) + kv * (1.0 - v[3])) + prefix * p)
        return out

    def decide(self, snap: RoutingSnapshot) -> RoutingDecision:
        if not snap.engines:
            return no_engine()
        scores = self.scores(snap)
        best = max(scores)
        floor = best - 1e-12
        tied = [v for v, s in zip(snap.engines, scores, strict=True) if s >= floor]
        return RoutingDecision(pick_tied(tied, snap.tie_break).engine_id, f"score {best:.3f}")


def _add_queue(total: list[float], weight: float, views: tuple[EngineView, ...]) -> list[float]:
    """``total`` plus ``weight x queue_scores(views)``."""
    queues = [v[1] for v in views]
    lo, hi = min(queues), max(queues)
    if hi == lo:
        term = weight * 1.0
        return [t + term for t in total]
    span = hi - lo
    return [t + weight * ((hi - q) / span) for t, q in zip(total, queues, strict=True)]


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
