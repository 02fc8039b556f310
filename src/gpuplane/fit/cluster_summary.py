"""What ``snapshot show`` says about a cluster beyond counts: node pools with their hardware and
kubelet configuration, MIG layouts, FGD's expected fragmentation, and why each pending pod is
pending (kube-scheduler's decision for it on the snapshot).

Fragmentation is FGD's measure (Weng et al., ATC'23; ``gpuplane.scheduler.policies.frag``): for
each node, the free GPU capacity that the cluster's own demand could not use there, weighted by
how common each demand is. The demand is the cluster's pods (bound and pending) by GPU request:
a whole-GPU pod asks 1000 milli on each of its GPUs, a pod without GPUs is CPU-only.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from gpuplane.api.resources import CPU, NVIDIA_GPU, is_mig_resource, mig_profile_of
from gpuplane.fit.framework_view import FrameworkView
from gpuplane.fit.model import FitCluster, FitNode, FitPod
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.framework.types import GPU_MILLI, MILLI_PER_GPU
from gpuplane.scheduler.policies.frag import frag_of_nodes
from gpuplane.scheduler.policies.types import TypicalPods
from gpuplane.slicing.mig.node_devices import MIG_CONFIG_LABEL

PRODUCT = "nvidia.com/gpu.product"
INSTANCE = "node.kubernetes.io/instance-type"


@dataclass(frozen=True, slots=True)
class PoolRow:
    product: str
    instance_type: str
    nodes: int
    cordoned: int
    gpus: int
    gpus_requested: int
    hardware: str
    kubelet: str
    mig: str  # "all-1g.10gb: 56 x 1g.10gb, 10 used" per layout, or ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "product": self.product,
            "instanceType": self.instance_type,
            "nodes": self.nodes,
            "cordoned": self.cordoned,
            "gpus": self.gpus,
            "gpusRequested": self.gpus_requested,
            "gpusFree": self.gpus - self.gpus_requested,
            "hardware": self.hardware,
            "kubelet": self.kubelet,
            "mig": self.mig,
        }


@dataclass(frozen=True, slots=True)
class PendingWhy:
    pod: str
    gpus: int
    why: str

    def as_dict(self) -> dict[str, Any]:
        return {"pod": self.pod, "gpus": self.gpus, "why": self.why}


@dataclass(frozen=True, slots=True)
class ClusterSummary:
    pools: tuple[PoolRow, ...]
    free_gpus: int
    fragmented_gpus: float  # FGD: expected free GPU capacity the demand cannot use
    demand: tuple[tuple[str, float], ...]  # ("4 GPU", share) of the typical pods
    pending: tuple[PendingWhy, ...]

    @property
    def fragmentation_pct(self) -> float:
        return 100.0 * self.fragmented_gpus / self.free_gpus if self.free_gpus else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "pools": [p.as_dict() for p in self.pools],
            "fragmentation": {
                "freeGpus": self.free_gpus,
                "fragmentedGpus": round(self.fragmented_gpus, 3),
                "percentOfFree": round(self.fragmentation_pct, 2),
                "demand": [{"pod": k, "share": round(v, 4)} for k, v in self.demand],
            },
            "pendingWhy": [p.as_dict() for p in self.pending],
        }


def _mig(nodes: list[FitNode], view: FrameworkView) -> str:
    layouts: Counter[str] = Counter()
    used: Counter[str] = Counter()
    for n in nodes:
        for r, v in n.allocatable.items():
            if is_mig_resource(r):
                layouts[f"{n.labels.get(MIG_CONFIG_LABEL, '?')}: {mig_profile_of(r)}"] += v
        for p in view.pods_by_node.get(n.name, ()):
            for r, v in p.info.requests.items():
                if is_mig_resource(r):
                    used[f"{n.labels.get(MIG_CONFIG_LABEL, '?')}: {mig_profile_of(r)}"] += v
    return ", ".join(f"{k} x{v} ({used[k]} used)" for k, v in sorted(layouts.items()))


def _hardware(n: FitNode) -> str:
    topo = n.hardware.topology
    if topo is None:
        return "none"
    return topo.name if n.hardware.exact else f"{topo.name} (guessed)"


def _kubelet(n: FitNode) -> str:
    k = n.kubelet
    text = f"{k.topology_manager_policy}/{k.topology_manager_scope}"
    return text + (", cpu static" if k.cpu_manager_policy == "static" else "")


def _pools(cluster: FitCluster, view: FrameworkView) -> tuple[PoolRow, ...]:
    groups: dict[tuple[str, str], list[FitNode]] = {}
    for n in cluster.nodes:
        key = (n.labels.get(PRODUCT, "(no GPU label)"), n.labels.get(INSTANCE, "-"))
        groups.setdefault(key, []).append(n)
    rows = []
    for (product, instance), nodes in sorted(groups.items()):
        requested = sum(len(view.holdings[n.name].taken_gpus) for n in nodes)
        rows.append(
            PoolRow(
                product,
                instance,
                len(nodes),
                sum(1 for n in nodes if n.unschedulable),
                sum(n.gpus for n in nodes),
                requested,
                "; ".join(sorted({_hardware(n) for n in nodes})),
                "; ".join(sorted({_kubelet(n) for n in nodes})),
                _mig(nodes, view),
            )
        )
    return tuple(rows)


def _typical(pods: tuple[FitPod, ...]) -> tuple[TypicalPods, tuple[tuple[str, float], ...]]:
    shapes: Counter[tuple[int, int, int]] = Counter()
    for p in pods:
        if p.finished:
            continue
        whole, milli = p.info.requests.get(NVIDIA_GPU, 0), p.info.requests.get(GPU_MILLI, 0)
        per_gpu, count = (MILLI_PER_GPU, whole) if whole else ((milli, 1) if milli else (0, 0))
        shapes[(p.info.requests.get(CPU, 0), per_gpu, count)] += 1
    total = sum(shapes.values()) or 1
    specs = sorted(shapes)
    typical = TypicalPods(
        cpu_milli=np.array([s[0] for s in specs], dtype=np.int64),
        gpu_milli=np.array([s[1] for s in specs], dtype=np.int64),
        num_gpu=np.array([s[2] for s in specs], dtype=np.int64),
        access=np.ones((len(specs), 1), dtype=bool),
        prob=np.array([shapes[s] / total for s in specs], dtype=np.float64),
        gpu_spec=tuple("" for _ in specs),
    )
    by_gpus: Counter[str] = Counter()
    for (_, per_gpu, count), n in shapes.items():
        by_gpus[
            f"{count} GPU"
            if per_gpu == MILLI_PER_GPU
            else (f"{per_gpu}m GPU share" if per_gpu else "no whole GPU")
        ] += n
    return typical, tuple((k, v / total) for k, v in sorted(by_gpus.items()))


def _fragmentation(view: FrameworkView, typical: TypicalPods) -> float:
    snap = view.snapshot
    if typical.num_specs == 0 or snap.num_nodes == 0:
        return 0.0
    cpu_row = snap.resources.index(CPU)
    cpu_left = (snap.allocatable[cpu_row] - snap.requested[cpu_row]).astype(np.int64)
    gpu_left = np.clip(snap.gpu_free_milli, 0, None).astype(np.int64)
    model = np.zeros(snap.num_nodes, dtype=np.int64)
    return float(frag_of_nodes(cpu_left, gpu_left, model, typical).sum()) / MILLI_PER_GPU


def _pending(
    scheduler: Scheduler, cluster: FitCluster, view: FrameworkView
) -> tuple[PendingWhy, ...]:
    pending = [
        p for p in cluster.pods if p.node is None and p.phase == "Pending" and not p.terminating
    ]
    handled = [replace(p.info) for p in pending if scheduler.handles(p.info.scheduler_name)]
    decision = scheduler.decide(view.snapshot, handled) if handled else None
    why: dict[str, str] = {}
    if decision is not None:
        for b in decision.bindings:
            why[b.pod_uid] = f"fits now on {b.node} (the scheduler has not retried it yet)"
        for u in decision.unschedulable:
            why[u.pod_uid] = u.message + (
                f" (nominated: {u.nominated_node})" if u.nominated_node else ""
            )
    out = []
    for p in pending:
        text = why.get(p.info.uid, f"no profile named {p.info.scheduler_name!r} here")
        out.append(PendingWhy(p.info.key, p.gpus, text))
    return tuple(out)


def summarise_cluster(
    scheduler: Scheduler, cluster: FitCluster, view: FrameworkView
) -> ClusterSummary:
    typical, demand = _typical(cluster.pods)
    free = int(np.count_nonzero(view.snapshot.gpu_free_milli == MILLI_PER_GPU))
    return ClusterSummary(
        pools=_pools(cluster, view),
        free_gpus=free,
        fragmented_gpus=_fragmentation(view, typical),
        demand=demand,
        pending=_pending(scheduler, cluster, view),
    )
