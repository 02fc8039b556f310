"""The SLO-aware scaler across pools and bounds: P/D pools scaled independently, min/max,
scale to zero and back, determinism."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pytest

from gpuplane.autoscaler.slo.capacity import PoolRole
from gpuplane.autoscaler.slo.decision import ScaleAction
from gpuplane.autoscaler.slo.scaler import decide
from gpuplane.autoscaler.slo.settings import SloScalerSettings
from gpuplane.autoscaler.slo.snapshot import (
    LoadingReplica,
    PoolMemory,
    PoolSnapshot,
    Recommendation,
    SloSnapshot,
)
from tests.unit.autoscaler.test_slo_fixtures import (
    CAPACITY,
    NOW,
    SETTINGS,
    Loop,
    correction_for,
    decide_one,
    flat,
    learn,
    make_pool,
    needed_for,
)


def covered(replicas: int, *, ago: float = 400.0) -> PoolMemory:
    """Memory of an earlier decision (older than the window) that needed ``replicas``."""
    return PoolMemory((Recommendation(NOW - ago, replicas),), last_traffic_s=NOW)


# --- prefill / decode disaggregation ---------------------------------------------------------


def pd_pools(**decode_signals: float) -> tuple[PoolSnapshot, PoolSnapshot]:
    prefill = make_pool(name="prefill", role=PoolRole.PREFILL, rates=flat(6.0), ready=4)
    signals: dict[str, Any] = {"num_requests_running": 60.0, "kv_cache_usage": 0.5}
    signals.update(decode_signals)
    decode = make_pool(name="decode", role=PoolRole.DECODE, rates=flat(6.0), ready=2, **signals)
    return prefill, decode


def test_pd_pools_are_decided_independently() -> None:
    prefill, decode = pd_pools()
    both = decide(SloSnapshot(NOW, (prefill, decode)), SETTINGS)
    assert both.pool("prefill") == decide_one(prefill)
    assert both.pool("decode") == decide_one(decode)
    with pytest.raises(KeyError, match="prefill, decode"):
        both.pool("colocated")


def test_prefill_pool_reacts_to_ttft_and_prompt_load_not_kv() -> None:
    prefill, _ = pd_pools()
    base = decide_one(prefill)
    assert base.numbers.needed_kv == 0 and base.numbers.itl_correction == 1.0
    longer = decide_one(
        replace(prefill, signals=replace(prefill.signals, mean_prompt_tokens=3000.0))
    )
    assert longer.desired_replicas > base.desired_replicas
    predicted = CAPACITY.predict(PoolRole.PREFILL, 4, 6.0, prefill.signals.mix).ttft_p90_s
    assert predicted is not None
    slow = replace(prefill, signals=replace(prefill.signals, ttft_p90_s=3 * predicted))
    assert learn(slow).desired_replicas > base.desired_replicas
    kv_full = replace(
        prefill,
        signals=replace(prefill.signals, kv_cache_usage=1.0, preemptions_per_s=5.0, itl_p99_s=9.0),
    )
    assert decide_one(kv_full).desired_replicas == base.desired_replicas


def test_decode_pool_reacts_to_kv_preemptions_and_itl_not_ttft() -> None:
    _, decode = pd_pools()
    base = decide_one(decode)
    assert base.numbers.needed_backlog == 0 and base.numbers.ttft_correction == 1.0
    full = decide_one(replace(decode, signals=replace(decode.signals, kv_cache_usage=0.95)))
    assert full.numbers.binding == "kv"
    # 0.95 x 2 replicas x (forecast / observed) at 80 % usage
    ratio = full.numbers.forecast_rps / full.numbers.observed_rps
    assert full.numbers.needed_kv == math.ceil(0.95 * 2 * ratio / 0.8)
    assert full.desired_replicas > base.desired_replicas
    waiting = replace(decode.signals, kv_cache_usage=0.7, num_requests_waiting=60.0)
    assert decide_one(replace(decode, signals=waiting)).numbers.kv_demand == pytest.approx(
        0.7 * 2 * 2 * ratio
    )
    preempting = decide_one(replace(decode, signals=replace(decode.signals, preemptions_per_s=0.5)))
    assert preempting.numbers.needed_kv >= 3  # 2 + max(1, 25 % of 2)
    predicted = CAPACITY.predict(PoolRole.DECODE, 2, 6.0, decode.signals.mix).itl_p99_s
    assert predicted is not None
    slow = replace(decode, signals=replace(decode.signals, itl_p99_s=predicted * 4))
    learnt = learn(slow).numbers.itl_correction
    assert learnt == pytest.approx(correction_for(predicted * 4, predicted, 0.2), rel=1e-3)
    assert learnt > 1.5
    ttft_bad = replace(
        decode, signals=replace(decode.signals, ttft_p90_s=99.0, num_requests_waiting=0.0)
    )
    assert decide_one(ttft_bad).desired_replicas == base.desired_replicas


# --- bounds ----------------------------------------------------------------------------------


def test_clamped_to_max_and_says_the_slo_is_out_of_reach() -> None:
    d = decide_one(make_pool(rates=flat(500.0), ready=2, max_replicas=10))
    assert d.desired_replicas == 10
    assert d.numbers.unattainable
    assert "not met even at max_replicas" in d.reason


def test_above_max_goes_to_max_even_with_loading_pods() -> None:
    pods = (LoadingReplica(NOW - 10.0),)
    d = decide_one(make_pool(rates=flat(8.0), ready=12, loading=pods, max_replicas=6))
    assert d.desired_replicas == 6
    assert d.action is ScaleAction.CLAMP


def test_min_replicas_floor() -> None:
    d = decide_one(make_pool(rates=flat(0.0), ready=5, min_replicas=3, memory=covered(3)))
    assert d.desired_replicas == 3
    below = decide_one(make_pool(rates=flat(0.0), ready=1, min_replicas=3))
    assert below.desired_replicas == 3 and below.action is ScaleAction.CLAMP


def test_scale_up_step_limit() -> None:
    limited = SloScalerSettings(max_scale_up_replicas=2)
    d = decide_one(make_pool(rates=flat(30.0), ready=2), limited)
    assert d.desired_replicas == 4
    assert d.numbers.needed > 4
    assert "limited to +2" in d.reason


# --- scale to zero and back ------------------------------------------------------------------


def test_scale_to_zero_after_the_idle_window_only() -> None:
    def burst(t: float) -> float:
        return 3.0 if t <= NOW + 60 else 0.0

    loop = Loop(burst, ready=2, min_replicas=0)
    decisions = loop.run(900)
    zero = [i for i, d in enumerate(decisions) if d.action is ScaleAction.SCALE_TO_ZERO]
    assert len(zero) == 1
    idle_at = decisions[zero[0]].numbers.idle_s
    assert idle_at is not None and idle_at >= SETTINGS.idle_window_s
    assert all(d.desired_replicas >= 1 for d in decisions[: zero[0]])
    assert all(d.desired_replicas == 0 for d in decisions[zero[0] :])
    assert decisions[-1].action is ScaleAction.HOLD


def test_no_scale_to_zero_with_min_replicas_or_while_loading() -> None:
    quiet = flat(0.0)
    old = PoolMemory(last_traffic_s=NOW - 1000.0)
    assert (
        decide_one(make_pool(rates=quiet, ready=2, min_replicas=1, memory=old)).desired_replicas
        >= 1
    )
    pods = (LoadingReplica(NOW - 10.0),)
    d = decide_one(make_pool(rates=quiet, ready=1, loading=pods, min_replicas=0, memory=old))
    assert d.desired_replicas == 2


def test_min_zero_keeps_one_until_idle() -> None:
    recent = PoolMemory((Recommendation(NOW - 400.0, 1),), last_traffic_s=NOW - 100.0)
    d = decide_one(make_pool(rates=flat(0.0), ready=1, min_replicas=0, memory=recent))
    assert d.desired_replicas == 1
    assert d.numbers.idle_s == 100.0


def test_activation_from_zero_counts_the_queue_built_during_cold_start() -> None:
    rates = (*flat(0.0, 39), 2.0)
    pool = make_pool(rates=rates, ready=0, min_replicas=0, num_requests_waiting=5.0, window_s=15.0)
    d = decide_one(pool)
    assert d.action is ScaleAction.ACTIVATE
    assert d.numbers.projected_queue == pytest.approx(5.0 + 2.0 * 180.0)
    assert d.desired_replicas >= needed_for(d.numbers.forecast_rps, pool) + 1
    assert "cold start" in d.reason
    assert d.memory.recommendations == (Recommendation(NOW, d.desired_replicas),)
    # A queued request alone (the router holds it) also activates.
    held = decide_one(make_pool(rates=flat(0.0), ready=0, min_replicas=0, num_requests_waiting=1))
    assert held.action is ScaleAction.ACTIVATE and held.desired_replicas >= 1


def test_zero_without_requests_stays_at_zero() -> None:
    d = decide_one(make_pool(rates=flat(0.0), ready=0, min_replicas=0))
    assert d.desired_replicas == 0 and d.action is ScaleAction.HOLD
    assert d.numbers.predicted is None
    up = decide_one(make_pool(rates=flat(0.0), ready=0, min_replicas=2))
    assert up.desired_replicas == 2


def test_round_trip_zero_to_serving_to_zero() -> None:
    def pulse(t: float) -> float:
        return 4.0 if NOW + 300 < t <= NOW + 900 else 0.0

    loop = Loop(pulse, ready=0, min_replicas=0)
    loop.run(2400)
    actions = [d.action for d in loop.decisions if d.rescale]
    assert actions[0] is ScaleAction.ACTIVATE
    assert actions[-1] is ScaleAction.SCALE_TO_ZERO
    assert loop.decisions[-1].desired_replicas == 0


# --- purity ----------------------------------------------------------------------------------


def test_decide_is_deterministic_and_does_not_touch_its_input() -> None:
    prefill, decode = pd_pools(kv_cache_usage=0.9, preemptions_per_s=0.2)
    snap = SloSnapshot(NOW, (prefill, decode))
    before = repr(snap)
    first, second = decide(snap, SETTINGS), decide(snap, SETTINGS)
    assert first == second
    assert repr(snap) == before
    swapped = decide(SloSnapshot(NOW, (decode, prefill)), SETTINGS)
    assert swapped.pool("prefill") == first.pool("prefill")


def test_snapshot_checks() -> None:
    with pytest.raises(ValueError, match="min_replicas <= max_replicas"):
        make_pool(min_replicas=5, max_replicas=3)
    with pytest.raises(ValueError, match="finite and >= 0"):
        make_pool(rates=(1.0, float("nan")))
    with pytest.raises(ValueError, match="unique"):
        SloSnapshot(NOW, (make_pool(), make_pool()))
