"""Holt's linear trend and the ETS(A,A,N) prediction bound the scaler provisions for."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.autoscaler.slo.forecast import (
    damped_steps,
    forecast_rate,
    forecast_sigma,
    holt,
    recent_peak,
)

ARGS: dict[str, Any] = {"alpha": 0.3, "beta": 0.1, "z": 1.2816, "headroom": 0.0}


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


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.floats(min_value=0.0, max_value=500.0), min_size=0, max_size=60),
    st.floats(min_value=0.0, max_value=900.0),
    st.floats(min_value=1.0, max_value=8.0),
    st.sampled_from([0.9, 0.95, 1.0]),
    st.sampled_from([None, 4]),
)
def test_bound_is_finite_non_negative_and_grows_with_the_load(
    samples: list[float], horizon: float, k: float, phi: float, peak: int | None
) -> None:
    args = {**ARGS, "phi": phi, "peak_steps": peak}
    f = forecast_rate(samples, 15.0, horizon, **args)
    assert math.isfinite(f.upper_rps) and f.upper_rps >= 0.0
    assert f.upper_rps >= f.point_rps or math.isclose(f.upper_rps, f.point_rps)
    g = forecast_rate([k * s for s in samples], 15.0, horizon, **args)
    assert g.upper_rps >= f.upper_rps * (1 - 1e-9) - 1e-9


# --- damping, counting noise, the recent peak ------------------------------------------------


def test_a_damped_trend_levels_off() -> None:
    line = [3.0 + 0.5 * i for i in range(40)]
    level, trend, _ = holt(line, 0.3, 0.1, 0.9)
    f = forecast_rate(line, 15.0, 600.0, **{**ARGS, "phi": 0.9})
    assert f.point_rps == pytest.approx(level + trend * damped_steps(40, 0.9))
    # However long the horizon, at most phi / (1 - phi) = 9 steps of the slope are added.
    assert f.point_rps < level + 9 * trend + 1e-9
    assert damped_steps(1e6, 0.9) == pytest.approx(9.0)
    assert damped_steps(7, 1.0) == 7
    undamped = forecast_rate(line, 15.0, 600.0, **ARGS)
    assert undamped.point_rps == pytest.approx(line[-1] + 0.5 * 40)
    assert f.point_rps < undamped.point_rps


@pytest.mark.parametrize("phi", [0.8, 0.9, 0.95, 0.98, 1.0])
def test_forecast_sigma_is_the_ets_state_space_variance(phi: float) -> None:
    a, bs = 0.3, 0.1
    b = a * bs
    for h in (1, 2, 5, 13, 40):
        if phi < 1:  # the closed form of ETS(A,Ad,N) (FPP 3rd ed., Table 8.8)
            one = 1 - phi
            closed = (
                1
                + a * a * (h - 1)
                + b * phi * h / one**2 * (2 * a * one + b * phi)
                - b
                * phi
                * (1 - phi**h)
                / (one**2 * (1 - phi * phi))
                * (2 * a * (1 - phi * phi) + b * phi * (1 + 2 * phi - phi**h))
            )
        else:
            closed = 1 + (h - 1) * (a * a + a * b * h + b * b * h * (2 * h - 1) / 6)
        assert forecast_sigma(1.5, h, a, bs, phi) == pytest.approx(1.5 * math.sqrt(closed))
    # Continuous in phi at 1 (the sum form does not cancel catastrophically).
    assert forecast_sigma(1.0, 30, a, bs, 0.999999) == pytest.approx(
        forecast_sigma(1.0, 30, a, bs, 1.0), rel=1e-4
    )


def test_poisson_counting_noise_is_not_forecast_uncertainty() -> None:
    rng = np.random.default_rng(3)
    rate, step = 10.0, 15.0
    samples = list(rng.poisson(rate * step, size=40) / step)
    _, _, raw = holt(samples, 0.3, 0.1, 0.95)
    assert raw > 0.5  # sampling alone scatters 15 s rates by sqrt(10 / 15) = 0.8 req/s
    f = forecast_rate(samples, step, 195.0, **{**ARGS, "phi": 0.95})
    assert f.sigma_rps < 0.5 * raw
    assert f.upper_rps < rate * 1.25
    # A stream that really moves keeps its noise.
    moving = [rate + (6.0 if (i // 4) % 2 else -6.0) for i in range(40)]
    assert forecast_rate(moving, step, 195.0, **ARGS).sigma_rps > 2.0


def test_bursty_stationary_traffic_is_capped_at_its_recent_peak() -> None:
    bursty = [30.0 if i % 10 in (3, 4) else 0.0 for i in range(40)]  # 15 req/s at most per minute
    assert recent_peak(bursty, 4) == pytest.approx(15.0)
    free = forecast_rate(bursty, 15.0, 195.0, **ARGS)
    capped = forecast_rate(bursty, 15.0, 195.0, **ARGS, peak_steps=4)
    assert free.upper_rps > 30.0
    assert capped.upper_rps == pytest.approx(max(15.0, capped.point_rps))
    # A ramp beyond the recent peak is still followed by the point forecast.
    line = [1.0 + 0.5 * i for i in range(40)]
    ramp = forecast_rate(line, 15.0, 195.0, **ARGS, peak_steps=4)
    assert ramp.upper_rps >= ramp.point_rps > line[-1]


def test_recent_peak_edges() -> None:
    assert recent_peak([], 4) == 0.0
    assert recent_peak([2.0, 4.0], 4) == pytest.approx(3.0)
    assert recent_peak([1.0, 5.0, 1.0], 1) == 5.0
