"""The run's summary: what the cluster did, in numbers a platform team asks for."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gpuplane.api.pod_phase import PodPhase
from gpuplane.api.resources import NVIDIA_GPU

if TYPE_CHECKING:
    from gpuplane.twin.simulation import Simulation


def _pct(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"count": 0, "p50": None, "p90": None, "p99": None, "max": None}
    arr = np.asarray(values)
    return {
        "count": len(values),
        "p50": round(float(np.percentile(arr, 50)), 3),
        "p90": round(float(np.percentile(arr, 90)), 3),
        "p99": round(float(np.percentile(arr, 99)), 3),
        "max": round(float(arr.max()), 3),
    }


def _pods(sim: Simulation, until_s: float) -> dict[str, Any]:
    pods = list(sim.cluster.store.pods.values())
    state = {"pending": 0, "running": 0, "succeeded": 0, "failed": 0, "deleted": 0}
    gpu_s = 0.0
    latency: list[float] = []
    waiting: dict[str, int] = {}
    for p in pods:
        if p.is_deleted:
            state["deleted"] += 1
        else:
            state[p.phase.value.lower()] += 1
        if p.scheduled_s is not None:
            latency.append(p.scheduled_s - p.created_s)
            end = p.finished_s if p.finished_s is not None else until_s
            gpu_s += p.gpu_fraction * max(0.0, end - p.scheduled_s)
        elif p.phase is PodPhase.PENDING and not p.is_deleted and p.last_schedule_message:
            waiting[p.last_schedule_message] = waiting.get(p.last_schedule_message, 0) + 1
    top = sorted(waiting.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    return {
        "created": len(pods),
        "at_end": state,
        "restarts": sum(p.restart_count for p in pods),
        "replacements_by_controllers": sim.cluster.counters.get("controller_replacements", 0),
        "gpu_slicing": {
            "mig_reconfigurations": sim.cluster.counters.get("mig_reconfigurations", 0),
            "gpu_oom_kills": sim.cluster.counters.get("gpu_oom_kills", 0),
        },
        "kubelet_admission": {
            "aligned": sim.cluster.counters.get("pods_admitted_aligned", 0),
            "rejected_topology_affinity": sim.cluster.counters.get("admission_rejections", 0),
        },
        "scheduling_latency_s": _pct(latency),
        "pending_reasons_at_end": [{"pods": n, "message": m} for m, n in top],
        "gpu_hours_allocated": round(gpu_s / 3600, 3),
    }


def _jobs(sim: Simulation) -> dict[str, Any]:
    jobs = list(sim.cluster.store.jobs.values())
    durations = [
        j.finished_s - j.created_s
        for j in jobs
        if j.condition == "Complete" and j.finished_s is not None
    ]
    return {
        "total": len(jobs),
        "complete": sum(1 for j in jobs if j.condition == "Complete"),
        "failed": sum(1 for j in jobs if j.condition == "Failed"),
        "active": sum(1 for j in jobs if j.condition is None),
        "completion_time_s": _pct(durations),
    }


def _deployments(sim: Simulation) -> list[dict[str, Any]]:
    store = sim.cluster.store
    out = []
    for key, d in sorted(store.deployments.items()):
        rs = store.replica_sets[f"{d.namespace}/{d.replica_set}"]
        pods = [store.pods[u] for u in rs.pods]
        out.append(
            {
                "name": key,
                "replicas": d.replicas,
                "ready": sum(1 for p in pods if p.is_active and p.conditions.get("Ready")),
                "pods_created": len(pods),
                "replacements": rs.replacements,
            }
        )
    return out


def build_summary(sim: Simulation, until_s: float) -> dict[str, Any]:
    c = sim.cluster
    nodes = list(c.store.nodes.values())
    gpus = sum(n.num_gpus for n in nodes)
    pods = _pods(sim, until_s)
    capacity_h = gpus * until_s / 3600
    pools: dict[str, int] = {}
    for n in nodes:
        pools[n.pool] = pools.get(n.pool, 0) + 1
    return {
        "scenario": sim.name,
        "seed": c.seed,
        "until_s": until_s,
        "placement": sim.placement_name,
        "events_processed": c.loop.num_processed,
        "nodes": {
            "total": len(nodes),
            "by_pool": dict(sorted(pools.items())),
            "ready_at_end": sum(1 for n in nodes if n.ready and not n.lost),
            "gpu_ready_at_end": sum(1 for n in nodes if n.gpus_advertised and n.ready),
        },
        "gpus": {
            "capacity": gpus,
            "allocated_at_end": sum(n.requested.get(NVIDIA_GPU, 0) for n in nodes),
            "capacity_gpu_hours": round(capacity_h, 3),
            "allocated_gpu_hours": pods["gpu_hours_allocated"],
            "allocation_ratio": round(pods["gpu_hours_allocated"] / capacity_h, 4)
            if capacity_h
            else 0.0,
        },
        "pods": pods,
        "jobs": _jobs(sim),
        "deployments": _deployments(sim),
        "events_by_reason": dict(sorted(c.events.counts.items())),
        "counters": dict(sorted(c.counters.items())),
    }
