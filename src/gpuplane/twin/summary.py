"""The run's summary: what the cluster did, in numbers a platform team asks for.

``RunSummary`` is a frozen value the report reads field by field; ``as_dict()`` is its JSON form
(summary.json), key for key what earlier versions wrote. The cluster's own figures (nodes, GPUs,
pods, jobs, Deployments, events, counters) are computed here from the store; the components'
sections (the GPU Operator, serving, KEDA/HPA, the SLO scaler) are their own ``summary()``
values, placed by type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuplane.api.pod_phase import PodPhase
from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.twin.autoscaling.summary import AutoscalingSummary, SloScalingSummary
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.component import SummarySection, fields_dict
from gpuplane.twin.operator.summary import OperatorSummary
from gpuplane.twin.serving.summary import ServingSummary


@dataclass(frozen=True, slots=True)
class Percentiles:
    """Rounded to 3 decimals; all None when there were no values."""

    count: int
    p50: float | None
    p90: float | None
    p99: float | None
    max: float | None

    @classmethod
    def of(cls, values: Sequence[float]) -> Percentiles:
        if not values:
            return cls(0, None, None, None, None)
        arr = np.asarray(values)
        return cls(
            count=len(values),
            p50=round(float(np.percentile(arr, 50)), 3),
            p90=round(float(np.percentile(arr, 90)), 3),
            p99=round(float(np.percentile(arr, 99)), 3),
            max=round(float(arr.max()), 3),
        )

    def as_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True, slots=True)
class NodesSummary:
    total: int
    by_pool: Mapping[str, int]
    ready_at_end: int
    gpu_ready_at_end: int

    def as_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True, slots=True)
class GpusSummary:
    capacity: int
    allocated_at_end: int
    capacity_gpu_hours: float
    allocated_gpu_hours: float
    allocation_ratio: float

    def as_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True, slots=True)
class PodCounts:
    """Pods by phase at the end; a deleted pod counts as deleted whatever its last phase."""

    pending: int
    running: int
    succeeded: int
    failed: int
    deleted: int

    def as_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True, slots=True)
class GpuSlicingSummary:
    mig_reconfigurations: int
    gpu_oom_kills: int

    def as_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True, slots=True)
class AdmissionSummary:
    aligned: int
    rejected_topology_affinity: int

    def as_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True, slots=True)
class PendingReason:
    pods: int
    message: str

    def as_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True, slots=True)
class PodsSummary:
    created: int
    at_end: PodCounts
    restarts: int
    replacements_by_controllers: int
    gpu_slicing: GpuSlicingSummary
    kubelet_admission: AdmissionSummary
    scheduling_latency_s: Percentiles
    pending_reasons_at_end: tuple[PendingReason, ...]  # the five most common messages
    gpu_hours_allocated: float

    def as_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True, slots=True)
class JobsSummary:
    total: int
    complete: int
    failed: int
    active: int
    completion_time_s: Percentiles

    def as_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True, slots=True)
class DeploymentSummary:
    name: str  # namespace/name
    replicas: int
    ready: int
    pods_created: int
    replacements: int

    def as_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True, slots=True)
class RunSummary:
    scenario: str
    seed: int
    until_s: float
    placement: str
    events_processed: int
    nodes: NodesSummary
    gpus: GpusSummary
    pods: PodsSummary
    jobs: JobsSummary
    deployments: tuple[DeploymentSummary, ...]
    events_by_reason: Mapping[str, int]
    counters: Mapping[str, int]
    # The components' sections; None where the run has no such component.
    gpu_operator: OperatorSummary | None = None
    serving: ServingSummary | None = None
    autoscaling: AutoscalingSummary | None = None
    slo_scaling: SloScalingSummary | None = None
    # Set only when the run was stopped early (Ctrl-C): ``until_s`` is then the simulated time
    # reached, ``requested_until_s`` the time asked for.
    interrupted: bool | None = None
    requested_until_s: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """summary.json: the cluster's figures, then each section the run has."""
        return {k: v for k, v in fields_dict(self).items() if v is not None}


def _pods(c: Cluster, until_s: float) -> PodsSummary:
    pods = list(c.store.pods.values())
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
    counters = c.counters
    return PodsSummary(
        created=len(pods),
        at_end=PodCounts(**state),
        restarts=sum(p.restart_count for p in pods),
        replacements_by_controllers=counters.get("controller_replacements", 0),
        gpu_slicing=GpuSlicingSummary(
            mig_reconfigurations=counters.get("mig_reconfigurations", 0),
            gpu_oom_kills=counters.get("gpu_oom_kills", 0),
        ),
        kubelet_admission=AdmissionSummary(
            aligned=counters.get("pods_admitted_aligned", 0),
            rejected_topology_affinity=counters.get("admission_rejections", 0),
        ),
        scheduling_latency_s=Percentiles.of(latency),
        pending_reasons_at_end=tuple(PendingReason(pods=n, message=m) for m, n in top),
        gpu_hours_allocated=round(gpu_s / 3600, 3),
    )


def _jobs(c: Cluster) -> JobsSummary:
    jobs = list(c.store.jobs.values())
    durations = [
        j.finished_s - j.created_s
        for j in jobs
        if j.condition == "Complete" and j.finished_s is not None
    ]
    return JobsSummary(
        total=len(jobs),
        complete=sum(1 for j in jobs if j.condition == "Complete"),
        failed=sum(1 for j in jobs if j.condition == "Failed"),
        active=sum(1 for j in jobs if j.condition is None),
        completion_time_s=Percentiles.of(durations),
    )


def _deployments(c: Cluster) -> tuple[DeploymentSummary, ...]:
    store = c.store
    out = []
    for key, d in sorted(store.deployments.items()):
        rs = store.replica_sets[f"{d.namespace}/{d.replica_set}"]
        pods = [store.pods[u] for u in rs.pods]
        out.append(
            DeploymentSummary(
                name=key,
                replicas=d.replicas,
                ready=sum(1 for p in pods if p.is_active and p.conditions.get("Ready")),
                pods_created=len(pods),
                replacements=rs.replacements,
            )
        )
    return tuple(out)


def build_summary(
    c: Cluster,
    *,
    name: str,
    placement: str,
    until_s: float,
    sections: Sequence[SummarySection] = (),
) -> RunSummary:
    nodes = list(c.store.nodes.values())
    gpus = sum(n.num_gpus for n in nodes)
    pods = _pods(c, until_s)
    capacity_h = gpus * until_s / 3600
    pools: dict[str, int] = {}
    for n in nodes:
        pools[n.pool] = pools.get(n.pool, 0) + 1
    operator, serving, autoscaling, slo_scaling = _place(sections)
    return RunSummary(
        scenario=name,
        seed=c.seed,
        until_s=until_s,
        placement=placement,
        events_processed=c.loop.num_processed,
        nodes=NodesSummary(
            total=len(nodes),
            by_pool=dict(sorted(pools.items())),
            ready_at_end=sum(1 for n in nodes if n.ready and not n.lost),
            gpu_ready_at_end=sum(1 for n in nodes if n.gpus_advertised and n.ready),
        ),
        gpus=GpusSummary(
            capacity=gpus,
            allocated_at_end=sum(n.requested.get(NVIDIA_GPU, 0) for n in nodes),
            capacity_gpu_hours=round(capacity_h, 3),
            allocated_gpu_hours=pods.gpu_hours_allocated,
            allocation_ratio=round(pods.gpu_hours_allocated / capacity_h, 4) if capacity_h else 0.0,
        ),
        pods=pods,
        jobs=_jobs(c),
        deployments=_deployments(c),
        events_by_reason=dict(sorted(c.events.counts.items())),
        counters=dict(sorted(c.counters.items())),
        gpu_operator=operator,
        serving=serving,
        autoscaling=autoscaling,
        slo_scaling=slo_scaling,
    )


_Sections = tuple[
    OperatorSummary | None,
    ServingSummary | None,
    AutoscalingSummary | None,
    SloScalingSummary | None,
]


def _place(sections: Sequence[SummarySection]) -> _Sections:
    """Each component's section in its field of the summary."""
    operator: OperatorSummary | None = None
    serving: ServingSummary | None = None
    autoscaling: AutoscalingSummary | None = None
    slo_scaling: SloScalingSummary | None = None
    for section in sections:
        match section:
            case OperatorSummary():
                operator = section
            case ServingSummary():
                serving = section
            case AutoscalingSummary():
                autoscaling = section
            case SloScalingSummary():
                slo_scaling = section
            case _:
                raise TypeError(f"the run summary has no place for a {type(section).__name__}")
    return operator, serving, autoscaling, slo_scaling
