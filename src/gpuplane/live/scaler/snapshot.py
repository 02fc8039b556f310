"""Signals, replica counts and remembered state -> the ``SloSnapshot`` the twin's scaler decides
on.

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


def track_loading(starts: tuple[float, ...], loading: int, now_s: float) -> tuple[float, ...]:
    """First-seen times of the loading replicas: new ones start now; when fewer load, the
    oldest became Ready (or were deleted) first."""
    if loading <= len(starts):
        return starts[len(starts) - loading :]
    return starts + (now_s,) * (loading - len(starts))


def pool_snapshot(
    config: ScalerConfig,
    ready: int,
    signals: PoolSignals,
    loading_starts: tuple[float, ...],
    memory: PoolMemory,
    now_s: float,
) -> SloSnapshot:
    """The snapshot of one decision: the signals (``autoscaler.slo.signals``, as the twin's)
    with the pool's replicas and the trigger's bounds, capacity and objective."""
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
