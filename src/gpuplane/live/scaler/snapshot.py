"""Readings and remembered state -> the ``SloSnapshot`` the twin's scaler decides on.

The Deployment's pods that are not Ready are loading; Prometheus does not say when each started,
so the scaler remembers when it first saw each one (``track_loading``): a replica loading for
longer than the cold start is overdue and, as in the twin, counted as arriving now.
"""

from __future__ import annotations

from gpuplane.autoscaler.slo.snapshot import (
    LoadingReplica,
    PoolMemory,
    PoolSignals,
    PoolSnapshot,
    ReplicaStates,
    SloSnapshot,
)
from gpuplane.live.scaler.metadata import ScalerConfig
from gpuplane.live.scaler.readings import Readings


def track_loading(starts: tuple[float, ...], loading: int, now_s: float) -> tuple[float, ...]:
    """First-seen times of the loading replicas: new ones start now; when fewer load, the
    oldest became Ready (or were deleted) first."""
    if loading <= len(starts):
        return starts[len(starts) - loading :]
    return starts + (now_s,) * (loading - len(starts))


def pool_snapshot(
    config: ScalerConfig,
    readings: Readings,
    arrival_rps: tuple[float, ...],
    loading_starts: tuple[float, ...],
    memory: PoolMemory,
    now_s: float,
    mix: tuple[float, float],
) -> SloSnapshot:
    """The snapshot of one decision; ``mix`` is the (prompt, output) token means to use."""
    ready = min(readings.ready, readings.current)
    signals = PoolSignals(
        arrival_rps=arrival_rps,
        mean_prompt_tokens=mix[0],
        mean_output_tokens=mix[1],
        step_s=config.settings.sync_period_s,
        num_requests_waiting=readings.waiting,
        num_requests_running=readings.running,
        kv_cache_usage=readings.kv_usage,
        preemptions_per_s=readings.preemptions_per_s,
        ttft_p90_s=readings.ttft_p90_s,
        itl_p99_s=readings.itl_p99_s,
        prompt_quantiles=readings.prompt_quantiles,
    )
    pool = PoolSnapshot(
        name=config.deployment,
        role=config.role,
        replicas=ReplicaStates(ready, tuple(LoadingReplica(s) for s in loading_starts)),
        signals=signals,
        capacity=config.capacity,
        cold_start_s=config.cold_start_s,
        min_replicas=config.min_replicas,
        max_replicas=config.max_replicas,
        slo=config.slo,
        memory=memory,
    )
    return SloSnapshot(now_s, (pool,))
