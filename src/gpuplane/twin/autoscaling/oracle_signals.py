"""What only the twin knows about a service's requests, put into the SLO scaler's signals when
its spec says ``signals: oracle`` (``SignalSource``).

A live scaler reads arrivals as a rate of a scraped counter, the request mix from the
histograms of finished requests, and cannot see the arrivals' burstiness below the scrape
interval; the twin has every request's arrival time and prompt length. The oracle replaces the
deployable signals' arrival history, token means and prompt quantiles with exact figures from
the request stream and adds c_a² (``arrival_dispersion``); everything else stays what the
queries answered. Runs that use it say so (summary, report, the sweep's configuration name).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from gpuplane.autoscaler.slo.queries import HISTORY_STEPS
from gpuplane.autoscaler.slo.snapshot import PoolSignals
from gpuplane.twin.serving.runtime import ServingRuntime

MIX_WINDOW_S = 300.0  # the request mix is read over the last five minutes
PROMPT_QUANTILES = (0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0)
DISPERSION_WINDOW_S = 60.0  # counts vary around each minute's own mean (the forecast's scale)
MIN_DISPERSION_ARRIVALS = 50  # fewer: too noisy to tell from Poisson


def with_oracle(
    signals: PoolSignals, serving: ServingRuntime, service: str, now: float
) -> PoolSignals:
    """``signals`` with the request stream's exact arrivals, mix and burstiness."""
    step_s = signals.step_s
    arrivals, prompt, output = serving.arrival_history(service, now, step_s, HISTORY_STEPS)
    times, prompts, _ = serving.request_stream(service)
    return replace(
        signals,
        arrival_rps=arrivals,
        mean_prompt_tokens=prompt,
        mean_output_tokens=output,
        prompt_quantiles=prompt_quantiles(times, prompts, now),
        arrival_scv=arrival_dispersion(times, now, serving.services[service].spec.slo_ttft_s),
    )


def prompt_quantiles(
    arrivals: np.ndarray, prompts: np.ndarray, now: float
) -> tuple[tuple[float, float], ...]:
    """Prompt-length quantiles of the requests that arrived in ``(now - MIX_WINDOW_S, now]``
    (none without requests: the capacity model then takes every prompt at the mean)."""
    lo, hi = np.searchsorted(arrivals, [now - MIX_WINDOW_S, now], side="right")
    if hi <= lo:
        return ()
    values = np.quantile(prompts[lo:hi], PROMPT_QUANTILES)
    return tuple((q, float(v)) for q, v in zip(PROMPT_QUANTILES, values, strict=True))


def arrival_dispersion(
    arrivals: np.ndarray, now: float, bin_s: float, span_s: float = MIX_WINDOW_S
) -> float:
    """The arrivals' burstiness over ``(now - span_s, now]``: the index of dispersion of their
    counts in bins of ``bin_s`` (the TTFT budget: a burst shorter than it queues, a longer one
    is a rate change), each bin taken against the mean of its own minute so that the minute-to-
    minute changes the rate forecast follows do not count. A Poisson stream gives 1; an
    estimate of c_a² for the capacity model's G/G/c correction. 1 with too few arrivals.
    """
    per_window = max(2, int(DISPERSION_WINDOW_S // bin_s))
    windows = max(1, int(span_s // (per_window * bin_s)))
    edges = now - bin_s * np.arange(windows * per_window, -1, -1)
    counts = np.diff(np.searchsorted(arrivals, edges, side="right")).astype(np.float64)
    total = float(counts.sum())
    if total < MIN_DISPERSION_ARRIVALS:
        return 1.0
    grid = counts.reshape(windows, per_window)
    spread = float(((grid - grid.mean(axis=1, keepdims=True)) ** 2).sum())
    variance = spread / (counts.size - windows)  # pooled within-minute variance
    return variance / (total / counts.size)
