"""Cluster time series, sampled every ``metrics_interval_s`` (timeseries.csv), and the per-pool
series sampled in the same event (pools_timeseries.csv, ``twin.pool_metrics``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpuplane.api.pod_phase import PodPhase
from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.core.kernel import Priority
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.store import ObjectStore
from gpuplane.twin.component import Component
from gpuplane.twin.pool_metrics import PoolSampler
from gpuplane.twin.series import SeriesRow

COLUMNS = (
    "t_s",
    "nodes",
    "nodes_ready",
    "nodes_gpu_ready",
    "nodes_cordoned",
    "nodes_lost",
    "gpus_capacity",
    "gpus_allocatable",
    "gpus_allocated",
    "pods_pending",
    "pods_running",
    "pods_succeeded",
    "pods_failed",
)


def sample(store: ObjectStore, t_s: float, counters: dict[str, int]) -> dict[str, Any]:
    """One row; cost grows with nodes and active pods, not with every pod ever created."""
    ready = gpu_ready = cordoned = lost = capacity = 0
    for n in store.nodes.values():
        capacity += len(n.gpu_healthy)
        if n.lost:
            lost += 1
        elif n.ready:
            ready += 1
            gpu_ready += n.gpus_advertised
        cordoned += n.unschedulable
    pending = running = 0
    for uid in store.active:
        if store.pods[uid].phase is PodPhase.PENDING:
            pending += 1
        else:
            running += 1
    gpus_allocatable = int(store.alloc_gpu.sum())
    return {
        "t_s": round(t_s, 6),
        "nodes": len(store.nodes),
        "nodes_ready": ready,
        "nodes_gpu_ready": gpu_ready,
        "nodes_cordoned": cordoned,
        "nodes_lost": lost,
        "gpus_capacity": capacity,
        "gpus_allocatable": gpus_allocatable,
        "gpus_allocated": gpus_allocatable - int(store.free[NVIDIA_GPU].sum()),
        "pods_pending": pending,
        "pods_running": running,
        "pods_succeeded": counters.get("pods_succeeded", 0),
        "pods_failed": counters.get("pods_failed", 0),
    }


class MetricsSampler(Component):
    """One row at t = 0 and every ``metrics_interval_s`` after it, up to the end of the run."""

    def __init__(self, cluster: Cluster) -> None:
        self.c = cluster
        self.rows: list[dict[str, Any]] = []
        self.pool_rows: list[SeriesRow] = []
        self.pools = PoolSampler()
        self.until_s = 0.0

    def start(self, until_s: float) -> None:
        self.until_s = until_s
        self.c.loop.schedule(0.0, self._sample, priority=Priority.METRICS, label="metrics")

    def _sample(self) -> None:
        c = self.c
        self.rows.append(sample(c.store, c.now, c.counters))
        self.pool_rows += self.pools.rows(c.store, c.now)
        nxt = c.now + c.settings.metrics_interval_s
        if nxt <= self.until_s:
            c.loop.schedule(nxt, self._sample, priority=Priority.METRICS, label="metrics")

    def series(self, grid: Sequence[float]) -> dict[str, list[SeriesRow]]:
        return {"pools_timeseries.csv": list(self.pool_rows)}
