"""One decision's reads: the Deployment's replica counts and the signal queries
(``autoscaler.slo.signals.plan``) at one time, concurrently, through Prometheus's HTTP API.

The arrival-rate history the forecast needs is read once per grid time (multiples of the sync
period), at that time (``time=`` of the instant query): the first decision of a ScaledObject
backfills ``HISTORY_STEPS`` of it, later ones read only the steps that are new. The answers
become signals by the rules the twin reads its own answers by (``signals_from``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from gpuplane.autoscaler.slo.signals import SignalMemory, plan, signals_from
from gpuplane.autoscaler.slo.snapshot import PoolSignals
from gpuplane.live.scaler.metadata import ScalerConfig
from gpuplane.live.scaler.prom_api import PromApi, PromErrorKind, PrometheusError


@dataclass(frozen=True, slots=True)
class Readings:
    """What Prometheus said at ``now_s``: the replica counts, the signals, and the signals'
    memory for the next decision."""

    ready: int
    current: int
    signals: PoolSignals
    memory: SignalMemory


def _count(value: float | None, what: str, config: ScalerConfig) -> int:
    if value is None:
        raise PrometheusError(
            PromErrorKind.BAD_RESULT,
            f"no {what} for Deployment {config.namespace}/{config.deployment} "
            "(is kube-state-metrics scraped? set readyReplicasQuery/specReplicasQuery)",
        )
    return max(0, round(value))


async def read(config: ScalerConfig, api: PromApi, now_s: float, memory: SignalMemory) -> Readings:
    """Run the decision's queries; ``memory`` holds the arrival rates already read."""
    step_s = config.settings.sync_period_s
    queries = plan(config.queries, now_s, step_s, memory)
    replicas = (config.replica_queries.ready, config.replica_queries.spec)
    tasks = [api.query(text, now_s) for text in replicas]
    tasks += [api.query(q.text, q.at_s) for q in queries]
    values = await asyncio.gather(*tasks)
    results = dict(zip(queries, values[2:], strict=True))
    signals, kept = signals_from(config.queries, results, now_s, step_s, memory)
    return Readings(
        ready=_count(values[0], "ready replica count", config),
        current=_count(values[1], "spec.replicas", config),
        signals=signals,
        memory=kept,
    )
