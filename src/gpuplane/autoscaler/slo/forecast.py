"""The arrival rate to provision for: Holt's linear trend over the recent samples, its upper
prediction bound, over the horizon a replica started now takes to serve.

Holt's method smooths a level ``l`` and a trend ``b`` (per sample step):
``l_t = α·y_t + (1-α)(l_{t-1} + b_{t-1})``, ``b_t = β*(l_t - l_{t-1}) + (1-β*)·b_{t-1}``, and
forecasts ``l + b·h`` for ``h`` steps ahead. Its one-step errors estimate the noise ``σ``; the
forecast variance of the equivalent state-space model ETS(A,A,N) (Hyndman & Athanasopoulos,
*Forecasting: Principles and Practice*, 3rd ed., §8.7) is
``σ_h² = σ²·[1 + (h-1)·(α² + α·β·h + β²·h(2h-1)/6)]`` with ``β = α·β*``. The scaler provisions
for the largest ``l + b·h + z·σ_h`` from now to the horizon, times ``1 + headroom`` (not only
at its end: replicas removed now are gone at once, added ones arrive only at its end; ``σ_0`` is
taken as ``σ_1``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RateForecast:
    """``upper_rps`` is what the scaler provisions for; the rest explain it."""

    level_rps: float
    trend_rps_per_s: float
    sigma_rps: float
    horizon_s: float
    point_rps: float
    upper_rps: float


def holt(samples: Sequence[float], alpha: float, beta: float) -> tuple[float, float, float]:
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
        error = y - (level + trend)
        squared += error * error
        new_level = alpha * y + (1.0 - alpha) * (level + trend)
        trend = beta * (new_level - level) + (1.0 - beta) * trend
        level = new_level
    count = len(samples) - 1
    return level, trend, math.sqrt(squared / count) if count else 0.0


def forecast_sigma(sigma: float, steps: float, alpha: float, beta_star: float) -> float:
    """The ETS(A,A,N) forecast standard deviation ``steps`` ahead (at least one step's)."""
    h = max(1.0, steps)
    beta = alpha * beta_star
    growth = alpha**2 + alpha * beta * h + beta**2 * h * (2 * h - 1) / 6.0
    return sigma * math.sqrt(1.0 + (h - 1.0) * growth)


def forecast_rate(
    samples: Sequence[float],
    step_s: float,
    horizon_s: float,
    *,
    alpha: float,
    beta: float,
    z: float,
    headroom: float,
) -> RateForecast:
    """The rate to provision for over ``horizon_s`` from samples taken every ``step_s``."""
    level, trend, sigma = holt(samples, alpha, beta)
    steps = max(1, math.ceil(horizon_s / step_s - 1e-9))
    upper = 0.0
    for h in range(steps + 1):  # from now (the Ready replicas' load) to the horizon
        bound = level + trend * h + z * forecast_sigma(sigma, h, alpha, beta)
        upper = max(upper, bound)
    point = max(0.0, level + trend * horizon_s / step_s)
    return RateForecast(
        level_rps=max(0.0, level),
        trend_rps_per_s=trend / step_s,
        sigma_rps=sigma,
        horizon_s=horizon_s,
        point_rps=point,
        upper_rps=upper * (1.0 + headroom),
    )
