"""Bursty arrivals: the capacity model's G/G/c correction and the scaler's use of it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from gpuplane.autoscaler.slo.capacity import LoadMix, PoolRole
from gpuplane.autoscaler.slo.settings import SloScalerSettings
from gpuplane.autoscaler.slo.snapshot import PoolSignals
from gpuplane.twin.autoscaling.slo import arrival_dispersion
from tests.unit.autoscaler.test_slo_fixtures import CAPACITY, decide_one, flat, make_pool

MIX = LoadMix(1000.0, 200.0)


def test_poisson_arrivals_leave_the_prediction_unchanged() -> None:
    for n, rate in ((2, 6.0), (4, 15.0), (8, 30.0)):
        plain = CAPACITY.predict(PoolRole.UNIFIED, n, rate, MIX)
        same = CAPACITY.predict(PoolRole.UNIFIED, n, rate, replace(MIX, arrival_scv=1.0))
        assert plain == same


def test_bursty_arrivals_stretch_the_queueing_wait_by_allen_cunneen() -> None:
    # Near saturation the 90th-percentile wait is most of the TTFT: find such a load.
    def ttft(rate: float) -> float:
        value = CAPACITY.predict(PoolRole.UNIFIED, 3, rate, MIX).ttft_p90_s
        assert value is not None
        return value

    rate = next(float(r) for r in np.arange(1.0, 60.0, 0.5) if ttft(float(r)) > 2 * ttft(0.1))
    base = CAPACITY.predict(PoolRole.UNIFIED, 3, float(rate), MIX).ttft_p90_s
    idle = CAPACITY.predict(PoolRole.UNIFIED, 3, float(rate), replace(MIX, arrival_scv=0.0))
    bursty = CAPACITY.predict(PoolRole.UNIFIED, 3, float(rate), replace(MIX, arrival_scv=5.0))
    assert base is not None and idle.ttft_p90_s is not None and bursty.ttft_p90_s is not None
    # TTFT = own prefill + in-flight step (both unchanged) + wait x (c_a² + 1) / 2: 0.5 W at
    # c_a² = 0, W at 1, 3 W at 5.
    wait = (base - idle.ttft_p90_s) * 2.0  # c_a² = 0 halves the wait
    assert bursty.ttft_p90_s == pytest.approx(idle.ttft_p90_s + wait * 2.5, rel=1e-9)
    # Far from saturation nobody waits: burstiness changes nothing there.
    light = CAPACITY.predict(PoolRole.UNIFIED, 8, 0.5, replace(MIX, arrival_scv=20.0))
    assert light == CAPACITY.predict(PoolRole.UNIFIED, 8, 0.5, MIX)


def test_the_scaler_asks_for_more_replicas_for_bursty_traffic_unless_told_not_to() -> None:
    rate = 20.0
    poisson = decide_one(make_pool(rates=flat(rate), ready=6))
    bursty_pool = make_pool(rates=flat(rate), ready=6, arrival_scv=15.0)
    bursty = decide_one(bursty_pool)
    assert bursty.desired_replicas > poisson.desired_replicas
    ignored = decide_one(bursty_pool, SloScalerSettings(model_burstiness=False))
    assert ignored.desired_replicas == poisson.desired_replicas


def test_signals_reject_a_negative_or_infinite_burstiness() -> None:
    for bad in (-0.1, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="arrival_scv"):
            PoolSignals(flat(1.0), 1000.0, 200.0, arrival_scv=bad)


def test_dispersion_of_poisson_arrivals_is_near_one_and_of_bursts_far_above() -> None:
    rng = np.random.default_rng(7)
    poisson = np.cumsum(rng.exponential(0.1, 20_000))  # 10 req/s
    values = [arrival_dispersion(poisson, t, 2.0) for t in (400.0, 900.0, 1500.0)]
    assert all(0.75 < v < 1.25 for v in values)
    # The same mean rate in clumps of 20 requests within 50 ms, every 2 s on average.
    starts = np.cumsum(rng.exponential(2.0, 1_000))
    bursts = np.sort((starts[:, None] + rng.uniform(0, 0.05, (1_000, 20))).ravel())
    assert arrival_dispersion(bursts, 900.0, 2.0) > 10.0


def test_dispersion_ignores_minute_to_minute_rate_changes() -> None:
    # Evenly spaced arrivals, 5/s in one minute and 40/s in the next: each bin holds its
    # minute's mean exactly, so there is no burstiness at the TTFT scale.
    parts, t = [], 0.0
    for minute in range(6):
        rate = 5.0 if minute % 2 == 0 else 40.0
        parts.append(t + np.arange(0.0, 60.0, 1.0 / rate) + 0.5 / rate)
        t += 60.0
    arrivals = np.concatenate(parts)
    assert arrival_dispersion(arrivals, 360.0, 2.0) == pytest.approx(0.0, abs=1e-9)


def test_dispersion_is_one_with_too_few_arrivals() -> None:
    assert arrival_dispersion(np.array([1.0, 2.0, 3.0]), 300.0, 2.0) == 1.0


def test_a_target_margin_aims_below_the_objectives() -> None:
    pool = make_pool(rates=flat(20.0), ready=6)
    plain = decide_one(pool).desired_replicas
    tight = decide_one(pool, SloScalerSettings(target_margin=0.5)).desired_replicas
    assert tight > plain
    assert decide_one(pool, SloScalerSettings(target_margin=1.0)).desired_replicas == plain


def test_queue_time_beyond_its_budget_counts_as_a_backlog() -> None:
    # Requests waited 30 s at the 90th percentile in the last minute, but the gauge is empty
    # now (the burst came and went between two samples) and 6 replicas carry the mean rate.
    pool = make_pool(rates=flat(10.0), ready=6, queue_time_p90_s=30.0)
    watching = SloScalerSettings(queue_time_budget=0.5)
    plain = decide_one(pool)
    assert (
        plain.desired_replicas
        == decide_one(
            replace(pool, signals=replace(pool.signals, queue_time_p90_s=None))
        ).desired_replicas
    )  # off by default
    waited = decide_one(pool, watching)
    assert waited.desired_replicas > plain.desired_replicas
    assert waited.numbers.backlog_rps == pytest.approx(10.0 * (30.0 - 1.0) / 60.0)
    # Within the budget (1 s of the 2 s objective) the queue time asks for nothing.
    short = make_pool(rates=flat(10.0), ready=6, queue_time_p90_s=0.9)
    assert decide_one(short, watching).desired_replicas == plain.desired_replicas


def test_signals_reject_a_negative_queue_time() -> None:
    with pytest.raises(ValueError, match="queue_time_p90_s"):
        PoolSignals(flat(1.0), 1000.0, 200.0, queue_time_p90_s=-1.0)


def test_an_itl_margin_above_one_sizes_for_a_looser_tail() -> None:
    # At a 0.1 s ITL objective the ITL tail binds (no count meets it); at 3 x 0.1 s TTFT does.
    pool = make_pool(rates=flat(10.0), ready=20)
    strict = SloScalerSettings(itl_p99_s=0.1)
    loose = SloScalerSettings(itl_p99_s=0.1, itl_margin=3.0)
    assert decide_one(pool, loose).numbers.needed_slo < decide_one(pool, strict).numbers.needed_slo
    ttft_only = SloScalerSettings(itl_p99_s=0.3)
    assert (
        decide_one(pool, loose).numbers.needed_slo == decide_one(pool, ttft_only).numbers.needed_slo
    )
    with pytest.raises(ValueError, match="itl_margin"):
        SloScalerSettings(itl_margin=0.0)
