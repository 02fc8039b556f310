"""Factories for scheduler tests: ``make_cluster`` (a snapshot of identical or listed nodes),
``make_pod`` and ``bound`` (a pod already on a node)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import ValidationError

from gpuplane.api.resources import CPU, MEMORY, NVIDIA_GPU, PODS
from gpuplane.api.selectors import LabelSelector
from gpuplane.api.taints import Taint, Toleration
from gpuplane.api.topology_spread import TopologySpreadConstraint
from gpuplane.core.validation import first_error
from gpuplane.scheduler.framework.config import REGISTRY_CONTEXT, ProfileConfig, gpuplane_profile
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot, make_snapshot
from gpuplane.scheduler.framework.types import (
    GPU_MILLI,
    BoundPod,
    GpuShare,
    NominatedPod,
    PodGroupInfo,
    PodInfo,
    WaitingPod,
)
from gpuplane.scheduler.plugins.registry import in_tree_registry

GIB = 2**30


def make_cluster(
    gpus: Sequence[int] = (8, 8),
    *,
    num_gpus: int = 8,
    cpu_m: int = 64_000,
    mem: int = 512 * GIB,
    pods: int = 110,
    taints: Mapping[int, Sequence[Taint]] | None = None,
    labels: Mapping[int, Mapping[str, str]] | None = None,
    cordoned: Sequence[int] = (),
    matrix: np.ndarray | None = None,
    used_cpu_m: Sequence[int] | None = None,
    bound_pods: Sequence[BoundPod] = (),
    pod_groups: Sequence[PodGroupInfo] = (),
    waiting: Sequence[WaitingPod] = (),
    nominated: Sequence[NominatedPod] = (),
    now_s: float = 0.0,
    next_start_index: int = 0,
    namespace_labels: Mapping[str, Mapping[str, str]] | None = None,
    node_images: Sequence[Mapping[str, int]] | None = None,
) -> ClusterSnapshot:
    """Nodes ``n0..``; ``gpus[i]`` whole free GPUs out of ``num_gpus`` (the rest owned)."""
    n = len(gpus)
    if matrix is None:
        matrix = np.full((n, num_gpus), 1000, dtype=np.int64)
        for i, free in enumerate(gpus):
            matrix[i, free:] = 0
    names = [f"n{i}" for i in range(n)]
    requested_cpu = np.array(used_cpu_m if used_cpu_m is not None else [0] * n, dtype=np.int64)
    requested_pods = np.zeros(n, dtype=np.int64)
    for pod in bound_pods:
        i = names.index(pod.node)
        requested_cpu[i] += pod.requests.get(CPU, 0)
        requested_pods[i] += 1
    return make_snapshot(
        names,
        allocatable={
            CPU: np.full(n, cpu_m),
            MEMORY: np.full(n, mem),
            PODS: np.full(n, pods),
            NVIDIA_GPU: np.count_nonzero(matrix >= 0, axis=1),
        },
        requested={CPU: requested_cpu, MEMORY: np.zeros(n, dtype=np.int64), PODS: requested_pods},
        gpu_free_milli=matrix,
        node_labels=[dict((labels or {}).get(i, {})) for i in range(n)],
        node_taints=[tuple((taints or {}).get(i, ())) for i in range(n)],
        unschedulable=np.array([i in cordoned for i in range(n)], dtype=bool),
        bound_pods={p.uid: p for p in bound_pods},
        pod_groups={g.key: g for g in pod_groups},
        waiting=waiting,
        nominated=nominated,
        now_s=now_s,
        next_start_index=next_start_index,
        namespace_labels=namespace_labels,
        node_images=node_images,
    )


def make_pod(
    uid: str,
    gpus: int = 0,
    *,
    milli: int = 0,
    cpu_m: int = 1000,
    mem: int = 4 * GIB,
    prio: int = 0,
    t: float = 0.0,
    group: str | None = None,
    group_created_s: float | None = None,
    sel: Mapping[str, str] | None = None,
    tol: tuple[Toleration, ...] = (),
    affinity: Mapping[str, object] | None = None,
    nominated: str | None = None,
    preemption_policy: str = "PreemptLowerPriority",
    scheduler: str = "default-scheduler",
    labels: Mapping[str, str] | None = None,
    spread: tuple[TopologySpreadConstraint, ...] = (),
    default_selector: LabelSelector | None = None,
    namespace: str = "ns",
) -> PodInfo:
    requests = {CPU: cpu_m, MEMORY: mem}
    if gpus:
        requests[NVIDIA_GPU] = gpus
    if milli:
        requests[GPU_MILLI] = milli
    return PodInfo(
        uid=uid,
        namespace=namespace,
        name=uid,
        requests=requests,
        priority=prio,
        created_s=t,
        node_selector=dict(sel or {}),
        tolerations=tol,
        affinity=affinity,
        pod_group=group,
        scheduler_name=scheduler,
        preemption_policy=preemption_policy,
        nominated_node=nominated,
        group_created_s=group_created_s,
        labels=dict(labels or {}),
        topology_spread_constraints=spread,
        default_spread_selector=default_selector,
    )


def bound(
    uid: str,
    node: str,
    gpu_ids: tuple[int, ...] = (),
    *,
    prio: int = 0,
    start_s: float = 0.0,
    cpu_m: int = 1000,
    share: GpuShare | None = None,
    labels: Mapping[str, str] | None = None,
    affinity: Mapping[str, object] | None = None,
    namespace: str = "ns",
    terminating: bool = False,
) -> BoundPod:
    requests = {CPU: cpu_m}
    if gpu_ids:
        requests[NVIDIA_GPU] = len(gpu_ids)
    if share is not None:
        requests[GPU_MILLI] = share.milli
    return BoundPod(
        uid=uid,
        namespace=namespace,
        name=uid,
        node=node,
        priority=prio,
        requests=requests,
        start_s=start_s,
        gpu_ids=gpu_ids,
        gpu_share=share,
        labels=dict(labels or {}),
        affinity=affinity,
        terminating=terminating,
    )


def matrix_with(bound_pods: Sequence[BoundPod], n: int, num_gpus: int = 8) -> np.ndarray:
    """The device matrix of ``n`` nodes on which ``bound_pods`` hold their GPUs."""
    m = np.full((n, num_gpus), 1000, dtype=np.int64)
    for p in bound_pods:
        i = int(p.node[1:])
        for g in p.gpu_ids:
            m[i, g] = 0
        if p.gpu_share is not None:
            m[i, p.gpu_share.gpu] -= p.gpu_share.milli
    return m


# gpuplane's profile (GPUSharing and Coscheduling added) under the default scheduler name, for
# tests of fractional GPUs and gangs.
GPUPLANE = gpuplane_profile("default-scheduler")


def make_scheduler(profiles: Sequence[ProfileConfig] = (), *, reference: bool = False) -> Scheduler:
    """A Scheduler over the in-tree plugins, as the twin builds it."""
    return Scheduler(profiles, registry=in_tree_registry(), reference=reference)


def validate_profile(data: object) -> ProfileConfig:
    """A profile validated against the in-tree registry, as a scenario's are; a ValidationError
    becomes the located InputError a user sees."""
    try:
        return ProfileConfig.model_validate(data, context={REGISTRY_CONTEXT: in_tree_registry()})
    except ValidationError as err:
        raise first_error(ProfileConfig, err) from None
