"""The SLO-aware scaler over time: forecasting ahead of a ramp, loading pods, stabilisation,
hysteresis, backlog, observed-latency corrections."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from gpuplane.autoscaler.slo.capacity import PoolRole, SloTargets
from gpuplane.autoscaler.slo.decision import ScaleAction
from gpuplane.autoscaler.slo.settings import SloScalerSettings
from gpuplane.autoscaler.slo.snapshot import (
    LoadingReplica,
    PoolMemory,
    Recommendation,
)
from tests.unit.autoscaler.test_slo_fixtures import (
    CAPACITY,
    NOW,
    SETTINGS,
    STEP,
    Loop,
    correction_for,
    decide_one,
    flat,
    learn,
    make_pool,
    needed_for,
)

REACTIVE = SloScalerSettings(forecast_beta=0.0, forecast_quantile=0.5, headroom=0.0)


def covered(replicas: int, *, ago: float = 400.0) -> PoolMemory:
    """Memory of an earlier decision (older than the window) that needed ``replicas``."""
    return PoolMemory((Recommendation(NOW - ago, replicas),), last_traffic_s=NOW)


def ramp(t: float) -> float:
    """2 req/s for ten minutes, then +0.5 req/s per minute up to 20."""
    minutes = (t - NOW) / 60.0
    return 2.0 if minutes < 10 else min(20.0, 2.0 + 0.5 * (minutes - 10))


# --- forecasting -----------------------------------------------------------------------------


def test_scales_up_for_the_rate_expected_when_new_replicas_serve() -> None:
    rates = tuple(2.0 + 0.15 * i for i in range(41))  # 8 req/s now, +0.6 req/s per minute
    ready = needed_for(8.0, make_pool())
    pool = make_pool(rates=rates, ready=ready)
    linear = SloScalerSettings(forecast_damping=1.0)  # Holt's undamped trend: exact on a line
    d = decide_one(pool, linear)
    at_horizon = 8.0 + 0.15 * (195.0 / STEP)  # cold start 180 s + one 15 s sync period
    assert d.numbers.horizon_s == 195.0
    assert d.numbers.trend_rps_per_s == pytest.approx(0.01)
    assert d.numbers.forecast_rps >= at_horizon
    assert d.desired_replicas >= needed_for(at_horizon, pool) > ready
    assert d.action is ScaleAction.SCALE_UP
    # The default damped trend adds less of the slope, but still scales ahead of the rate.
    damped = decide_one(pool)
    assert 8.0 < damped.numbers.forecast_rps < d.numbers.forecast_rps
    assert damped.action is ScaleAction.SCALE_UP
    # The same rate without a trend needs fewer.
    assert decide_one(make_pool(rates=flat(8.0), ready=ready)).desired_replicas < d.desired_replicas


def test_forecast_keeps_the_slo_through_a_ramp_a_reactive_scaler_misses() -> None:
    ahead = Loop(ramp, ready=2)
    ahead.run(70 * 60)
    behind = Loop(ramp, ready=2, settings=REACTIVE)
    behind.run(70 * 60)
    # A ramp cannot be seen before it starts; after that the forecast keeps (nearly) ahead of
    # it: fewer misses than one cold start's worth of decisions, a reactive scaler many more.
    assert ahead.slo_misses() <= 180 / STEP
    assert ahead.slo_misses() * 5 < behind.slo_misses()
    assert all(c > 0 for c in ahead.changes())


def test_a_longer_cold_start_scales_earlier() -> None:
    rates = tuple(1.0 + 0.2 * i for i in range(41))
    quick = decide_one(make_pool(rates=rates, ready=4, cold_start_s=30.0))
    slow = decide_one(make_pool(rates=rates, ready=4, cold_start_s=600.0))
    assert slow.numbers.forecast_rps > quick.numbers.forecast_rps
    assert slow.desired_replicas > quick.desired_replicas


def test_a_sudden_jump_is_provisioned_before_the_forecast_level_catches_up() -> None:
    rates = (*flat(2.0, 36), 10.0, 10.0, 10.0, 10.0)
    d = decide_one(make_pool(rates=rates, ready=2, window_s=60.0))
    assert d.numbers.observed_rps == 10.0
    assert d.numbers.forecast_rps >= 10.0 * (1 + SETTINGS.headroom)


# --- loading replicas, stabilisation, hysteresis ---------------------------------------------


def test_never_scales_down_while_a_replica_is_loading() -> None:
    memory = covered(2)
    base = make_pool(rates=flat(1.0), ready=8, memory=memory)
    assert decide_one(base).action is ScaleAction.SCALE_DOWN
    pod = LoadingReplica(started_s=NOW - 60.0)
    d = decide_one(replace(base, replicas=replace(base.replicas, loading=(pod,))))
    assert d.action is ScaleAction.HOLD
    assert d.desired_replicas == d.current_replicas == 9
    assert "loading" in d.reason


def test_loading_replicas_count_as_capacity_and_are_not_started_again() -> None:
    need = needed_for(8.0 * 1.1, make_pool())
    # About to serve (one is overdue: counted as arriving now), so no queue builds up.
    pods = tuple(LoadingReplica(NOW - 175.0 - i) for i in range(need - 2))
    d = decide_one(make_pool(rates=flat(8.0), ready=2, loading=pods))
    assert d.current_replicas == need
    assert d.numbers.projected_queue == 0.0
    assert d.desired_replicas == need
    assert d.action is ScaleAction.HOLD
    assert decide_one(make_pool(rates=flat(8.0), ready=2)).desired_replicas >= need


def test_queue_growth_before_loading_replicas_arrive_is_counted() -> None:
    """Two replicas short at 8 req/s: if the missing two arrive in 20 s the spare capacity
    drains the queue before a new replica could serve; if they arrive in 170 s it does not."""
    soon = tuple(LoadingReplica(NOW - 160.0) for _ in range(2))
    late = tuple(LoadingReplica(NOW - 10.0) for _ in range(2))
    a = decide_one(make_pool(rates=flat(8.0), ready=2, loading=soon))
    b = decide_one(make_pool(rates=flat(8.0), ready=2, loading=late))
    assert a.numbers.projected_queue == 0.0
    assert b.numbers.projected_queue > 100.0
    assert a.desired_replicas < b.desired_replicas
    # An explicit expected ready time overrides start + cold start.
    explicit = tuple(LoadingReplica(NOW - 160.0, expected_ready_s=NOW + 170.0) for _ in range(2))
    c = decide_one(make_pool(rates=flat(8.0), ready=2, loading=explicit))
    assert c.numbers.projected_queue == pytest.approx(b.numbers.projected_queue)


def test_scale_down_waits_for_the_stabilisation_window() -> None:
    high = needed_for(8.0, make_pool())

    def drop(t: float) -> float:
        return 8.0 if t <= NOW + 600 else 1.0

    loop = Loop(drop, ready=high + 1)
    loop.run(600)
    assert loop.changes() == []  # already enough (8 req/s with headroom needs high + 1)
    after = loop.run(900)
    downs = [i for i, d in enumerate(after) if d.action is ScaleAction.SCALE_DOWN]
    assert downs, "never scaled down"
    seconds_after_drop = (downs[0] + 1) * STEP
    window = SETTINGS.stabilization_s(180.0)  # the horizon: 180 s cold start + 15 s
    assert window == 195.0
    assert window <= seconds_after_drop <= window + 60
    assert all(d.desired_replicas == high + 1 for d in after[: downs[0]])
    assert after[-1].desired_replicas < high


@pytest.mark.parametrize("window", [None, 300.0])
def test_stabilisation_uses_the_highest_need_of_the_window(window: float | None) -> None:
    settings = SloScalerSettings(scale_down_stabilization_s=window)
    span = settings.stabilization_s(180.0)
    pool = make_pool(rates=flat(1.0), ready=8)
    inside = replace(pool, memory=PoolMemory((Recommendation(NOW - span + 10, 8),), NOW))
    d = decide_one(inside, settings)
    assert d.action is ScaleAction.HOLD
    assert d.numbers.stabilised == 8
    assert "stabilising" in d.reason
    outside = replace(pool, memory=covered(8, ago=span + 10))
    d = decide_one(outside, settings)
    assert d.action is ScaleAction.SCALE_DOWN
    assert d.numbers.stabilised == d.numbers.needed_down < 8
    # The memory forgets what left the window and keeps this decision's figure.
    assert d.memory.recommendations == (Recommendation(NOW, d.numbers.needed_down),)


def test_first_decision_does_not_scale_down() -> None:
    d = decide_one(make_pool(rates=flat(1.0), ready=10))
    assert d.action is ScaleAction.HOLD
    assert Recommendation(NOW, 10) in d.memory.recommendations


def test_scale_down_step_is_limited() -> None:
    d = decide_one(make_pool(rates=flat(0.5), ready=16, memory=covered(1)))
    assert d.desired_replicas == 8  # half of 16, though one would do
    gentle = SloScalerSettings(max_scale_down_fraction=0.1)
    assert (
        decide_one(make_pool(rates=flat(0.5), ready=5, memory=covered(1)), gentle).desired_replicas
        == 4
    )


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("start", [3, 5, 8])
def test_noisy_flat_load_converges_without_flapping(seed: int, start: int) -> None:
    counts = np.random.default_rng(seed).poisson(6.0 * STEP, size=1000) / STEP

    def noisy(t: float) -> float:
        return float(counts[round((t - NOW) / STEP) + 100])

    loop = Loop(noisy, ready=start, cold_start_s=60.0)
    loop.run(2 * 3600)
    changes = loop.changes()
    assert len(changes) <= 2
    assert all(c > 0 for c in changes) or all(c < 0 for c in changes)
    # Without hysteresis and stabilisation the same load flaps.
    if seed == 0 and start == 5:
        eager = SloScalerSettings(
            hysteresis=0.0, scale_down_stabilization_s=0.0, forecast_quantile=0.5, headroom=0.0
        )
        flappy = Loop(noisy, ready=start, cold_start_s=60.0, settings=eager)
        flappy.run(2 * 3600)
        assert len(flappy.changes()) > 20


def test_hysteresis_band_holds_when_the_need_sits_on_a_boundary() -> None:
    pool = make_pool(rates=flat(7.0), ready=5, memory=covered(4))
    d = decide_one(pool)
    assert (d.numbers.needed, d.numbers.needed_down) == (4, 5)  # 10 % more load needs a 5th
    assert d.action is ScaleAction.HOLD
    assert "hysteresis" in d.reason
    assert decide_one(pool, SloScalerSettings(hysteresis=0.0)).action is ScaleAction.SCALE_DOWN


# --- backlog ---------------------------------------------------------------------------------


def test_backlog_adds_replicas_to_drain_the_queue() -> None:
    ready = needed_for(4.0 * 1.1, make_pool())
    calm = decide_one(make_pool(rates=flat(4.0), ready=ready))
    busy = decide_one(make_pool(rates=flat(4.0), ready=ready, num_requests_waiting=1000.0))
    assert calm.numbers.needed_backlog == 0
    assert busy.numbers.binding == "backlog"
    # The ready replicas' spare capacity drains part of the queue before a new replica serves;
    # the rest, less the 4 req/s x 2 s a TTFT budget explains, is drained over 60 s.
    assert 0 < busy.numbers.projected_queue < 1000.0
    expected_rps = (busy.numbers.projected_queue - 4.0 * 2.0) / 60.0
    assert busy.numbers.backlog_rps == pytest.approx(expected_rps)
    pool = make_pool(rates=flat(4.0))
    assert busy.desired_replicas == needed_for(busy.numbers.forecast_rps + expected_rps, pool)
    assert busy.desired_replicas > calm.desired_replicas


def test_a_queue_the_ready_replicas_drain_before_new_ones_arrive_adds_nothing() -> None:
    d = decide_one(make_pool(rates=flat(2.0), ready=10, num_requests_waiting=50.0))
    assert d.numbers.projected_queue == 0.0
    assert d.numbers.needed_backlog == 0


def test_short_queue_within_the_ttft_budget_is_normal() -> None:
    ready = needed_for(8.0 * 1.1, make_pool()) + 2
    d = decide_one(
        make_pool(rates=flat(8.0), ready=ready, num_requests_waiting=10.0, cold_start_s=0)
    )
    assert d.numbers.projected_queue == 10.0
    assert d.numbers.needed_backlog == 0  # 10 <= 8 req/s x 2 s


# --- observed latencies ----------------------------------------------------------------------


def test_observed_ttft_above_prediction_corrects_the_model() -> None:
    base = make_pool(rates=flat(6.0), ready=4)
    predicted = CAPACITY.predict(PoolRole.UNIFIED, 4, 6.0, base.signals.mix).ttft_p90_s
    assert predicted is not None
    slow = make_pool(rates=flat(6.0), ready=4, ttft_p90_s=predicted * 2.5)
    target = correction_for(predicted * 2.5, predicted, 2.0)
    assert target > 1.5
    # One decision moves the (log) correction a quarter of the way; repeated ones converge.
    first = decide_one(slow).numbers.ttft_correction
    assert first == pytest.approx(target**SETTINGS.correction_smoothing)
    learnt = learn(slow)
    assert learnt.numbers.ttft_correction == pytest.approx(target, rel=1e-3)
    assert learnt.numbers.corrections_settled
    assert learnt.numbers.needed_slo > decide_one(base).numbers.needed_slo
    absurd = learn(make_pool(rates=flat(6.0), ready=4, ttft_p90_s=1e6))
    assert absurd.numbers.ttft_correction == pytest.approx(SETTINGS.correction_max, rel=1e-3)
    quick = learn(make_pool(rates=flat(6.0), ready=4, ttft_p90_s=1e-6))
    assert quick.numbers.ttft_correction == pytest.approx(
        correction_for(1e-6, predicted, 2.0), rel=1e-4
    )
    assert quick.numbers.ttft_correction < 1.0


def test_a_ratio_measured_far_below_the_target_is_mostly_ignored() -> None:
    """At 1 req/s over 8 replicas TTFT is the prefill alone; a constant 0.3 s the model misses
    (network, detokenisation) adds 70 % to it, but says little about the queue near the target,
    so only about a third of that is applied (the pool runs at a third of the 2 s target)."""
    pool = make_pool(rates=flat(1.0), ready=8)
    predicted = CAPACITY.predict(PoolRole.UNIFIED, 8, 1.0, pool.signals.mix).ttft_p90_s
    assert predicted is not None
    observed = predicted + 0.3
    d = learn(replace(pool, signals=replace(pool.signals, ttft_p90_s=observed)))
    raw = observed / predicted
    assert d.numbers.ttft_correction == pytest.approx(
        correction_for(observed, predicted, 2.0), rel=1e-4
    )
    assert 1.0 < d.numbers.ttft_correction < 1.0 + 0.4 * (raw - 1.0)


def test_corrections_are_learnt_only_in_a_steady_state() -> None:
    pool = make_pool(rates=flat(6.0), ready=4, ttft_p90_s=1.5)
    steady = learn(pool, times=8)
    assert steady.numbers.corrections_settled and steady.numbers.ttft_correction > 1.0
    # The Ready count changed since the last decision: the window mixes two pool sizes.
    memory = replace(steady.memory, ready=3, ttft_correction=1.0)
    changed = decide_one(replace(pool, memory=memory), now=NOW + 600)
    assert not changed.numbers.corrections_settled
    assert changed.numbers.ttft_correction == 1.0
    assert changed.memory.unsettled_s == NOW + 600 and changed.memory.ready == 4
    # Still within one latency window (60 s) of the change: nothing learnt.
    later = decide_one(replace(pool, memory=changed.memory), now=NOW + 645)
    assert not later.numbers.corrections_settled and later.numbers.ttft_correction == 1.0
    # A whole window later the latencies describe this pool again.
    settled = decide_one(replace(pool, memory=later.memory), now=NOW + 660)
    assert settled.numbers.corrections_settled and settled.numbers.ttft_correction > 1.0
    # A backlog (more queued than 6 req/s x 2 s) measures its own drain, not the model.
    queued = replace(pool, signals=replace(pool.signals, num_requests_waiting=200.0))
    backlog = decide_one(replace(queued, memory=replace(steady.memory, ttft_correction=1.0)))
    assert not backlog.numbers.corrections_settled
    assert backlog.numbers.ttft_correction == 1.0


def test_pool_targets_override_the_settings() -> None:
    pool = make_pool(rates=flat(6.0), ready=4)
    strict = replace(pool, slo=SloTargets(ttft_p90_s=0.5, itl_p99_s=0.05))
    assert decide_one(strict).numbers.needed > decide_one(pool).numbers.needed


def test_the_reason_names_the_objective_that_binds() -> None:
    d = decide_one(make_pool(rates=flat(4.0), ready=1, cold_start_s=0.0))
    assert d.numbers.binding == "slo" and d.desired_replicas == 3
    assert "(TTFT p90 at 2 would be" in d.reason and "> 2 s)" in d.reason
    # A tight ITL objective binds on the decode stream instead.
    itl = replace(make_pool(rates=flat(1.0), ready=1, cold_start_s=0.0), slo=SloTargets(9.0, 0.02))
    d = decide_one(itl)
    assert "(ITL p99 at" in d.reason and "> 0.02 s)" in d.reason
