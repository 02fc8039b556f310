"""One decision's reads: every query of ``Queries`` at one time, concurrently.

The arrival-rate history the forecast needs is read once per grid time (multiples of the sync
period), at that time (``time=`` of the instant query): the first decision of a ScaledObject
backfills ``HISTORY_STEPS`` of it, later ones read only the steps that are new.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from dataclasses import dataclass

from gpuplane.live.scaler.metadata import ScalerConfig
from gpuplane.live.scaler.prom_api import PromApi, PromErrorKind, PrometheusError
from gpuplane.live.scaler.queries import QUANTILES

HISTORY_STEPS = 40  # as the twin: ten minutes at 15 s


@dataclass(frozen=True, slots=True)
class Readings:
    """What Prometheus said at ``now_s``; None where a query had no data."""

    ready: int
    current: int
    arrivals: tuple[tuple[float, float], ...]  # (grid time, rate) of the steps read now
    waiting: float
    running: float
    kv_usage: float
    preemptions_per_s: float
    ttft_p90_s: float | None
    itl_p99_s: float | None
    prompt_tokens: float | None
    output_tokens: float | None
    prompt_quantiles: tuple[tuple[float, float], ...]


def grid(now_s: float, step_s: float) -> tuple[float, ...]:
    """The history's times, oldest first: multiples of ``step_s`` up to ``now_s``."""
    last = math.floor(now_s / step_s) * step_s
    return tuple(last - k * step_s for k in reversed(range(HISTORY_STEPS)))


def _count(value: float | None, what: str, config: ScalerConfig) -> int:
    if value is None:
        raise PrometheusError(
            PromErrorKind.BAD_RESULT,
            f"no {what} for Deployment {config.namespace}/{config.deployment} "
            "(is kube-state-metrics scraped? set readyReplicasQuery/specReplicasQuery)",
        )
    return max(0, round(value))


def _quantiles(values: tuple[float | None, ...]) -> tuple[tuple[float, float], ...]:
    points = tuple(zip(QUANTILES, values, strict=True))
    if any(v is None or v < 0 for _, v in points):
        return ()
    clean = tuple((q, float(v)) for q, v in points if v is not None)
    tokens = [t for _, t in clean]
    return clean if tokens == sorted(tokens) else ()


async def read(
    config: ScalerConfig, api: PromApi, now_s: float, known: Mapping[float, float]
) -> Readings:
    """Run the decision's queries; ``known`` holds the arrival rates already read."""
    q = config.queries
    times = [t for t in grid(now_s, config.settings.sync_period_s) if t not in known]
    gauges = (q.ready_replicas, q.spec_replicas, q.waiting, q.running, q.kv_usage, q.preemptions)
    latencies = (q.ttft_p90, q.itl_p99, q.prompt_tokens, q.output_tokens)
    tasks = [api.query(text, now_s) for text in (*gauges, *latencies)]
    tasks += [api.query(q.quantile(p), now_s) for p in QUANTILES]
    tasks += [api.query(q.arrival_rate, t) for t in times]
    values = await asyncio.gather(*tasks)
    ready, spec, waiting, running, kv, preempt = values[:6]
    ttft, itl, prompt, output = values[6:10]
    quantiles = tuple(values[10 : 10 + len(QUANTILES)])
    rates = values[10 + len(QUANTILES) :]
    return Readings(
        ready=_count(ready, "ready replica count", config),
        current=_count(spec, "spec.replicas", config),
        arrivals=tuple((t, max(0.0, r or 0.0)) for t, r in zip(times, rates, strict=True)),
        waiting=max(0.0, waiting or 0.0),
        running=max(0.0, running or 0.0),
        kv_usage=min(max(0.0, kv or 0.0), 1.0),
        preemptions_per_s=max(0.0, preempt or 0.0),
        ttft_p90_s=ttft if ttft is not None and ttft >= 0 else None,
        itl_p99_s=itl if itl is not None and itl >= 0 else None,
        prompt_tokens=prompt if prompt is not None and prompt >= 0 else None,
        output_tokens=output if output is not None and output >= 0 else None,
        prompt_quantiles=_quantiles(quantiles),
    )
