"""Holt's linear trend and the ETS(A,A,N) prediction bound the scaler provisions for."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.autoscaler.slo.forecast import forecast_rate, forecast_sigma, holt

ARGS = {"alpha": 0.3, "beta": 0.1, "z": 1.2816, "headroom": 0.0}


def test_a_straight_line_is_recovered_exactly() -> None:
    line = [3.0 + 0.5 * i for i in range(30)]
    level, trend, sigma = holt(line, 0.3, 0.1)
    assert level == pytest.approx(line[-1])
    assert trend == pytest.approx(0.5)
    assert sigma == pytest.approx(0.0, abs=1e-12)
    f = forecast_rate(line, 15.0, 150.0, **ARGS)
    assert f.trend_rps_per_s == pytest.approx(0.5 / 15.0)
    assert f.point_rps == pytest.approx(line[-1] + 0.5 * 10)
    assert f.upper_rps == pytest.approx(f.point_rps)


def test_flat_series_with_headroom() -> None:
    f = forecast_rate([4.0] * 20, 15.0, 195.0, **{**ARGS, "headroom": 0.25})
    assert (f.level_rps, f.trend_rps_per_s, f.sigma_rps) == (4.0, 0.0, 0.0)
    assert f.upper_rps == pytest.approx(5.0)


def test_falling_load_is_provisioned_at_its_near_end() -> None:
    falling = [20.0 - 0.5 * i for i in range(30)]
    f = forecast_rate(falling, 15.0, 300.0, **ARGS)
    assert f.point_rps < f.level_rps
    assert f.upper_rps == pytest.approx(f.level_rps)  # now is the highest point


def test_forecast_never_negative() -> None:
    f = forecast_rate([10.0, 6.0, 2.0, 0.0, 0.0], 15.0, 600.0, **ARGS)
    assert f.point_rps == 0.0 and f.upper_rps >= 0.0


def test_noise_widens_the_bound_with_the_horizon() -> None:
    noisy = [5.0 + (1.0 if i % 2 else -1.0) for i in range(40)]
    short = forecast_rate(noisy, 15.0, 15.0, **ARGS)
    long = forecast_rate(noisy, 15.0, 600.0, **ARGS)
    assert short.sigma_rps > 0.5
    assert short.upper_rps > short.level_rps
    assert long.upper_rps > short.upper_rps


def test_forecast_sigma_formula() -> None:
    assert forecast_sigma(2.0, 1, 0.3, 0.1) == 2.0
    assert forecast_sigma(2.0, 0.2, 0.3, 0.1) == 2.0
    a, b, h = 0.3, 0.3 * 0.1, 4
    expected = 2.0 * math.sqrt(1 + (h - 1) * (a**2 + a * b * h + b**2 * h * (2 * h - 1) / 6))
    assert forecast_sigma(2.0, h, 0.3, 0.1) == pytest.approx(expected)


def test_short_histories() -> None:
    assert holt([], 0.3, 0.1) == (0.0, 0.0, 0.0)
    assert holt([7.0], 0.3, 0.1) == (7.0, 0.0, 0.0)
    f = forecast_rate([], 15.0, 195.0, **ARGS)
    assert f.upper_rps == 0.0


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.floats(min_value=0.0, max_value=500.0), min_size=0, max_size=60),
    st.floats(min_value=0.0, max_value=900.0),
    st.floats(min_value=1.0, max_value=8.0),
)
def test_bound_is_finite_non_negative_and_scales_with_the_load(
    samples: list[float], horizon: float, k: float
) -> None:
    f = forecast_rate(samples, 15.0, horizon, **ARGS)
    assert math.isfinite(f.upper_rps) and f.upper_rps >= 0.0
    assert f.upper_rps >= f.point_rps or math.isclose(f.upper_rps, f.point_rps)
    g = forecast_rate([k * s for s in samples], 15.0, horizon, **ARGS)
    assert g.upper_rps == pytest.approx(k * f.upper_rps, rel=1e-9, abs=1e-9)
