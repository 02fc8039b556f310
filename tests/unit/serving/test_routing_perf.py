"""Routing shortcuts against the plain computations: the fused llm-d scores equal the scorer
functions added in order, and the simulation's cached engine views equal freshly read ones."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.request import Request, RequestId, Segment
from gpuplane.serving.routing.dispatch import EngineState
from gpuplane.serving.routing.prefix_index import ChainEntry
from gpuplane.serving.routing.request_path import RequestPath
from gpuplane.serving.routing.router import (
    EngineView,
    Router,
    RoutingDecision,
    RoutingSnapshot,
)
from gpuplane.serving.routing.scorers import (
    KvCostRouter,
    WeightedScorerRouter,
    kv_scores,
    prefix_scores,
    queue_scores,
)
from gpuplane.serving.routing.simulation import ServingSimulation, SimulationSettings
from gpuplane.serving.traffic.generators import LognormalLengths
from gpuplane.serving.traffic.sessions import SessionSpec, generate_sessions
from tests.unit.serving.test_engine_fakes import LINEAR, make_config, workload

REQ = Request(RequestId("q"), 0.0, 320, 10, (Segment("sys", 160), Segment("u", 160)))

view_values = st.tuples(
    st.integers(0, 6),  # waiting
    st.floats(0.0, 1.0),  # kv usage
    st.integers(0, 30),  # prefix blocks (approximate)
    st.integers(0, 500),  # cached tokens (precise)
)


def reference_scores(router: WeightedScorerRouter, snap: RoutingSnapshot) -> list[float]:
    """The scorers as separate functions, weighted and added in the weights' order."""
    parts = {
        "queue": lambda: queue_scores(snap.engines),
        "kv-cache-utilization": lambda: kv_scores(snap.engines),
        "prefix-cache": lambda: prefix_scores(snap, router.precise),
    }
    total = [0.0] * len(snap.engines)
    for name, weight in router.weights.items():
        if weight:
            for i, s in enumerate(parts[name]()):
                total[i] += weight * s
    return total


@settings(max_examples=150, deadline=None)
@given(
    values=st.lists(view_values, min_size=1, max_size=20),
    precise=st.booleans(),
    total_blocks=st.sampled_from([0, 1, 7, 20]),
    weights=st.sampled_from(
        [
            {"queue": 2.0, "kv-cache-utilization": 2.0, "prefix-cache": 3.0},
            {"queue": 1.5, "kv-cache-utilization": 0.3, "prefix-cache": 7.0},
            {"prefix-cache": 3.0, "queue": 2.0, "kv-cache-utilization": 2.0},  # another order
            {"queue": 1.0, "kv-cache-utilization": 1.0},
            {"queue": 2.0, "kv-cache-utilization": 0.0, "prefix-cache": 3.0},
            {"queue": -1.0, "kv-cache-utilization": 2.0, "prefix-cache": 0.5},
        ]
    ),
    tie_break=st.floats(0.0, 0.999),
)
def test_llm_d_scores_equal_the_scorers_added_in_order(
    values: list[tuple[int, float, int, int]],
    precise: bool,
    total_blocks: int,
    weights: dict[str, float],
    tie_break: float,
) -> None:
    views = tuple(
        EngineView(f"e{i}", waiting, 3, usage, 1, 10, 16, blocks, cached)
        for i, (waiting, usage, blocks, cached) in enumerate(values)
    )
    snap = RoutingSnapshot(0.0, REQ, views, 0, None, total_blocks, tie_break)
    router = WeightedScorerRouter(weights=dict(weights), precise=precise)
    want = reference_scores(router, snap)
    assert router.scores(snap) == want
    best = max(want)
    tied = [v for v, s in zip(views, want, strict=True) if s >= best - 1e-12]
    pick = tied[min(int(tie_break * len(tied)), len(tied) - 1)]
    assert router.decide(snap) == RoutingDecision(pick.engine_id, f"score {best:.3f}")


def test_unknown_scorers_are_refused() -> None:
    views = (EngineView("e0", 0, 0, 0.0, 0),)
    router = WeightedScorerRouter(weights={"queue": 1.0, "latency": 1.0})
    with pytest.raises(KeyError):
        router.scores(RoutingSnapshot(0.0, REQ, views))
    ignored = WeightedScorerRouter(weights={"queue": 1.0, "latency": 0.0})
    assert ignored.scores(RoutingSnapshot(0.0, REQ, views)) == [2.0 / 2.0]


# -- the simulation's engine views ----------------------------------------------------------
@dataclass
class Recording:
    """A router that remembers every snapshot it was shown."""

    inner: Router
    seen: list[RoutingSnapshot] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def needs(self) -> frozenset[str]:
        return self.inner.needs

    def decide(self, snap: RoutingSnapshot) -> RoutingDecision:
        self.seen.append(snap)
        return self.inner.decide(snap)


def run(router: Router, fresh: bool, monkeypatch: pytest.MonkeyPatch) -> list[RoutingSnapshot]:
    """A small run; ``fresh``: every snapshot reads every engine anew (no cached views)."""
    if fresh:
        original = RequestPath._engine_states

        def uncached(
            self: RequestPath, req: Request, chain: list[ChainEntry]
        ) -> tuple[EngineState, ...]:
            for slot in self.slots.values():
                slot.view = None
            return original(self, req, chain)

        monkeypatch.setattr(RequestPath, "_engine_states", uncached)
    recording = Recording(router)
    sim = ServingSimulation(recording, SimulationSettings(seed=4, scrape_interval_s=0.7))
    for i in range(4):
        sim.add_engine(Engine(make_config("vllm", num_gpu_blocks=70), LINEAR, f"e{i}"))
    spec = SessionSpec(rate_per_s=3.0, duration_s=8.0, think_mean_s=0.5, system_tokens=120)
    spec = replace(spec, user=LognormalLengths(30.0, 0.5, 25.0, 0.5), max_prompt_tokens=300)
    sim.submit_sessions(generate_sessions(spec, np.random.default_rng(2)))
    sim.submit(workload(6, n=120, rate=25.0))
    sim.run_until(3.0)
    sim.remove_engine("e1", drain=True)
    sim.run_until(5.0)
    sim.remove_engine("e2", drain=False)
    result = sim.run()
    assert result.conservation_problems() == []
    monkeypatch.undo()
    return recording.seen


@pytest.mark.parametrize(
    "router",
    [
        WeightedScorerRouter(),
        WeightedScorerRouter(weights={"queue": 2.0, "kv-cache-utilization": 1.0}),
        WeightedScorerRouter(precise=True),
        KvCostRouter(),
    ],
    ids=["llm-d", "load-only", "llm-d-precise", "dynamo"],
)
def test_cached_views_equal_fresh_views(router: Router, monkeypatch: pytest.MonkeyPatch) -> None:
    cached = run(router, False, monkeypatch)
    fresh = run(router, True, monkeypatch)
    assert len(cached) == len(fresh) > 100
    assert cached == fresh
    assert all(math.isfinite(v.kv_usage) for s in cached for v in s.engines)
    if router.needs:
        return  # views carry the request's prefix match: made anew for every request
    # Unique prompts (no segments) get the cached view itself: some reused, some not.
    plain = [s for s in cached if not s.request.segments and s.engines]
    reused = sum(a.engines[0] is b.engines[0] for a, b in pairwise(plain))
    assert 0 < reused < len(plain) - 1
