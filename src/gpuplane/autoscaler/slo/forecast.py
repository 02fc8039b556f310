"""The arrival rate to provision for: a damped-trend exponential smoothing of the recent samples,
its upper prediction bound, over the horizon a replica started now takes to serve.

Holt's method with a damped trend (Gardner & McKenzie) smooths a level ``l`` and a trend ``b``
(per sample step): ``l_t = α·y_t + (1-α)(l_{t-1} + φ·b_{t-1})``,
``b_t = β*(l_t - l_{t-1}) + (1-β*)·φ·b_{t-1}``, and forecasts ``l + (φ + φ² + … + φ^h)·b`` for
``h`` steps ahead; ``φ = 1`` is Holt's linear trend. Its one-step errors estimate the noise
``σ``; the forecast variance of the equivalent state-space model ETS(A,Ad,N) (Hyndman &
Athanasopoulos, *Forecasting: Principles and Practice*, 3rd ed., §8.7, Table 8.8), with
``β = α·β*``, is

``σ_h² = σ²·[1 + α²(h-1) + βφh/(1-φ)²·(2α(1-φ) + βφ)
              - βφ(1-φ^h)/((1-φ)²(1-φ²))·(2α(1-φ²) + βφ(1 + 2φ - φ^h))]``

and ``σ²·[1 + (h-1)·(α² + αβh + β²h(2h-1)/6)]`` for ``φ = 1``. The scaler provisions for the
largest ``forecast + z·σ_h`` from now to the horizon, times ``1 + headroom`` (not only at its end:
replicas removed now are gone at once, added ones arrive only at its end; ``σ_0`` is taken as
``σ_1``).

Why damped: an undamped trend fitted to 15 s samples extrapolates without limit, so a long cold
start (or a slope fitted to noise) turns into replicas the rate never needs; a damped trend (the
scaler's ``φ = 0.95`` per step: at most ``φ/(1-φ) = 19`` steps of the current slope) still
follows a ramp over a few minutes and levels off beyond, the standard robust choice for automatic
forecasting (FPP §8.2; fitted values of ``φ`` are usually kept within [0.8, 0.98]).

Why the counting noise is removed: a rate sampled as arrivals per ``step_s`` varies by
``λ/step_s`` even when the underlying rate ``λ`` holds still (Poisson arrivals), and the capacity
model already sizes for Poisson arrivals at the provisioned rate (Erlang C). Read as level
innovations, that noise would be compounded over the horizon and provision for swings the rate
never makes, so ``σ²`` keeps only its excess over the counting variance (the mean sampled rate
over ``step_s``).

Why capped at the recent peak: the ETS bound treats every deviation as a level innovation that
accumulates over the horizon, which for bursty but stationary traffic (the Azure code trace swings
between idle and 20 req/s minute to minute) provisions for rates the stream has never reached.
The scaler caps the bound at the highest latency-window rate of its history, unless the point
forecast itself is higher (a ramp is still followed), before the headroom is added.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RateForecast:
    """``upper_rps`` is what the scaler provisions for; the rest explain it (``sigma_rps`` is
    the one-step noise beyond Poisson counting noise)."""

    level_rps: float
    trend_rps_per_s: float
    sigma_rps: float
    horizon_s: float
    point_rps: float
    upper_rps: float


def holt(
    samples: Sequence[float], alpha: float, beta: float, phi: float = 1.0
) -> tuple[float, float, float]:
    """(level, trend per step, RMSE of the one-step-ahead errors) after the last sample.

    The trend starts as the mean slope of the first few samples; a single sample gives that
    level, no trend and no noise estimate.
    """
    if not samples:
        return 0.0, 0.0, 0.0
    level = float(samples[0])
    m = min(len(samples) - 1, 3)
    trend = (samples[m] - samples[0]) / m if m > 0 else 0.0
    squared = 0.0
    for y in samples[1:]:
        error = y - (level + phi * trend)
        squared += error * error
        new_level = alpha * y + (1.0 - alpha) * (level + phi * trend)
        trend = beta * (new_level - level) + (1.0 - beta) * phi * trend
        level = new_level
    count = len(samples) - 1
    return level, trend, math.sqrt(squared / count) if count else 0.0


def damped_steps(steps: float, phi: float) -> float:
    """``φ + φ² + … + φ^h``: how many steps of the current trend a forecast ``h`` ahead adds."""
    if phi >= 1.0:
        return steps
    return phi * (1.0 - math.pow(phi, steps)) / (1.0 - phi)


def forecast_sigma(
    sigma: float, steps: float, alpha: float, beta_star: float, phi: float = 1.0
) -> float:
    """The ETS(A,Ad,N) (``φ = 1``: ETS(A,A,N)) forecast standard deviation ``steps`` whole steps
    ahead (at least one step's).

    Summed as the state-space model defines it, ``σ_h² = σ²·[1 + Σ_{j<h} (α + β·(φ + … +
    φ^j))²]``, which equals the closed forms above and stays exact as ``φ`` approaches 1.
    """
    h = max(1, math.ceil(steps - 1e-9))
    b = alpha * beta_star
    total = 1.0
    for j in range(1, h):
        total += (alpha + b * damped_steps(j, phi)) ** 2
    return sigma * math.sqrt(total)


def recent_peak(samples: Sequence[float], width: int) -> float:
    """The highest mean of ``width`` consecutive samples (all of them if fewer)."""
    if not samples:
        return 0.0
    width = max(1, min(width, len(samples)))
    window = sum(samples[:width])
    peak = window
    for i in range(width, len(samples)):
        window += samples[i] - samples[i - width]
        peak = max(peak, window)
    return peak / width


def forecast_rate(
    samples: Sequence[float],
    step_s: float,
    horizon_s: float,
    *,
    alpha: float,
    beta: float,
    z: float,
    headroom: float,
    phi: float = 1.0,
    peak_steps: int | None = None,
) -> RateForecast:
    """The rate to provision for over ``horizon_s`` from samples taken every ``step_s``.

    With ``peak_steps``, the bound is capped at the recent peak: the highest mean over
    ``peak_steps`` consecutive samples, or the point forecast if that is higher.
    """
    level, trend, sigma = holt(samples, alpha, beta, phi)
    counting = sum(samples) / len(samples) / step_s if samples else 0.0
    sigma = math.sqrt(max(0.0, sigma * sigma - counting))
    steps = max(1, math.ceil(horizon_s / step_s - 1e-9))
    upper = 0.0
    for h in range(steps + 1):  # from now (the Ready replicas' load) to the horizon
        bound = (
            level + trend * damped_steps(h, phi) + z * forecast_sigma(sigma, h, alpha, beta, phi)
        )
        upper = max(upper, bound)
    point = max(0.0, level + trend * damped_steps(horizon_s / step_s, phi))
    if peak_steps is not None:
        upper = min(upper, max(point, recent_peak(samples, peak_steps)))
    return RateForecast(
        level_rps=max(0.0, level),
        trend_rps_per_s=trend / step_s,
        sigma_rps=sigma,
        horizon_s=horizon_s,
        point_rps=point,
        upper_rps=upper * (1.0 + headroom),
    )
