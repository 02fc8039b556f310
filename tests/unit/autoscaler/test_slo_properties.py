"""Properties of the SLO scaler's decisions over arbitrary pools (hypothesis)."""

from __future__ import annotations

import math
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.autoscaler.slo.capacity import PoolRole
from gpuplane.autoscaler.slo.decision import ScaleAction
from gpuplane.autoscaler.slo.scaler import decide
from gpuplane.autoscaler.slo.snapshot import (
    LoadingReplica,
    PoolMemory,
    PoolSnapshot,
    Recommendation,
    SloSnapshot,
)
from tests.unit.autoscaler.test_slo_fixtures import NOW, SETTINGS, decide_one, make_pool


@st.composite
def pools(draw: st.DrawFn) -> PoolSnapshot:
    role = draw(st.sampled_from(list(PoolRole)))
    min_replicas = draw(st.integers(0, 4))
    max_replicas = draw(st.integers(max(1, min_replicas), 25))
    cold = draw(st.sampled_from([0.0, 60.0, 180.0, 420.0]))
    loading = tuple(
        LoadingReplica(NOW - draw(st.floats(0.0, 600.0))) for _ in range(draw(st.integers(0, 3)))
    )
    rates = tuple(draw(st.lists(st.floats(0.0, 40.0), min_size=0, max_size=40)))
    recs = tuple(
        Recommendation(NOW - draw(st.floats(0.0, 900.0)), draw(st.integers(0, 25)))
        for _ in range(draw(st.integers(0, 4)))
    )
    last = draw(st.none() | st.floats(NOW - 2000.0, NOW))
    return make_pool(
        role=role,
        ready=draw(st.integers(0, 30)),
        loading=loading,
        rates=rates,
        cold_start_s=cold,
        min_replicas=min_replicas,
        max_replicas=max_replicas,
        memory=PoolMemory(recs, last),
        num_requests_waiting=draw(st.floats(0.0, 500.0)),
        num_requests_running=draw(st.floats(0.0, 300.0)),
        kv_cache_usage=draw(st.floats(0.0, 1.0)),
        preemptions_per_s=draw(st.sampled_from([0.0, 0.0, 0.5])),
    )


@settings(max_examples=300, deadline=None)
@given(pools())
def test_decisions_stay_within_bounds_and_keep_loading_pods(pool: PoolSnapshot) -> None:
    d = decide_one(pool)
    assert pool.min_replicas <= d.desired_replicas <= pool.max_replicas
    current = pool.replicas.current
    if pool.replicas.loading and current <= pool.max_replicas:
        assert d.desired_replicas >= current  # never remove a pod that is still loading
    if d.action is ScaleAction.SCALE_DOWN:
        removable = max(1, math.floor(current * SETTINGS.max_scale_down_fraction))
        assert d.desired_replicas >= current - removable
        assert d.numbers.stabilised is not None
        assert d.desired_replicas >= d.numbers.stabilised
    window = SETTINGS.stabilization_s(pool.cold_start_s)
    recs = d.memory.recommendations
    assert all(r.t_s > NOW - window for r in recs)
    if recs:  # this decision's figure comes last
        assert recs[-1].t_s == NOW and 0 <= recs[-1].replicas <= pool.max_replicas


@settings(max_examples=200, deadline=None)
@given(pools(), st.floats(1.0, 4.0))
def test_more_load_never_means_fewer_replicas(pool: PoolSnapshot, k: float) -> None:
    sig = pool.signals
    heavier = replace(
        sig,
        arrival_rps=tuple(k * r for r in sig.arrival_rps),
        num_requests_waiting=k * sig.num_requests_waiting,
    )
    assert decide_one(replace(pool, signals=heavier)).desired_replicas >= (
        decide_one(pool).desired_replicas
    )


@settings(max_examples=100, deadline=None)
@given(pools(), pools())
def test_pools_do_not_influence_each_other(a: PoolSnapshot, b: PoolSnapshot) -> None:
    a, b = replace(a, name="a"), replace(b, name="b")
    both = decide(SloSnapshot(NOW, (a, b)), SETTINGS)
    assert both.pool("a") == decide_one(a)
    assert both.pool("b") == decide_one(b)
    assert decide(SloSnapshot(NOW, (a, b)), SETTINGS) == both
