"""Cluster time series, sampled every ``metrics_interval_s``."""

from __future__ import annotations

from typing import Any

from gpuplane.twin.objects import PodPhase
from gpuplane.twin.spec import GPU
from gpuplane.twin.store import ObjectStore

COLUMNS = (
    "t_s", "nodes", "nodes_ready", "nodes_gpu_ready", "nodes_cordoned", "nodes_lost",
    "gpus_capacity", "gpus_allocatable", "gpus_allocated", "pods_pending", "pods_running",
    "pods_succeeded", "pods_failed",
)


def sample(store: ObjectStore, t_s: float) -> dict[str, Any]:
    nodes = list(store.nodes.values())
    pending = running = succeeded = failed = 0
    for p in store.pods.values():
        if p.is_deleted:
            continue
        if p.phase is PodPhase.PENDING:
            pending += 1
        elif p.phase is PodPhase.RUNNING:
            running += 1
        elif p.phase is PodPhase.SUCCEEDED:
            succeeded += 1
        else:
            failed += 1
    return {
        "t_s": round(t_s, 6),
        "nodes": len(nodes),
        "nodes_ready": sum(1 for n in nodes if n.ready and not n.lost),
        "nodes_gpu_ready": sum(1 for n in nodes if n.gpus_advertised and n.ready and not n.lost),
        "nodes_cordoned": sum(1 for n in nodes if n.unschedulable),
        "nodes_lost": sum(1 for n in nodes if n.lost),
        "gpus_capacity": sum(n.num_gpus for n in nodes),
        "gpus_allocatable": sum(store.gpu_allocatable(n) for n in nodes),
        "gpus_allocated": sum(n.requested.get(GPU, 0) for n in nodes),
        "pods_pending": pending,
        "pods_running": running,
        "pods_succeeded": succeeded,
        "pods_failed": failed,
    }
