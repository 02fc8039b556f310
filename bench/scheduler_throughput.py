"""Benchmark: scheduling throughput of the framework's default profile on 5,000 8-GPU nodes.

Run: ``.venv/bin/python bench/scheduler_throughput.py`` (options: ``--nodes``, ``--pods``,
``--batch``, ``--cut``, ``--spread``, ``--no-fgd``). In one process it schedules a seeded stream
of mixed pods (whole-GPU, multi-GPU, fractional ``gpuplane.io/gpu-milli``, CPU-only, gangs of 4,
a few high-priority pods that preempt) with ``Scheduler().decide``, ``--batch`` pods per decision
like the twin's cycles, applying every decision to the cluster before the next. The baseline runs
the first ``--cut`` pods of the same stream through the per-node reference
(``Scheduler(reference=True)``) and the vectorised framework from the same empty cluster, and
prints both rates and their ratio. ``--spread`` also schedules the stream as ReplicaSets' pods
(labels and the default spread selector of a ReplicaSet of 8, so PodTopologySpread's system
defaults count and score them; every 20th ReplicaSet with required pod anti-affinity by
hostname) and prints what that costs; ``--no-fgd`` leaves out the Fragmentation run.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from gpuplane.api.resources import CPU, MEMORY, NVIDIA_GPU, PODS
from gpuplane.api.selectors import from_match_fields
from gpuplane.api.taints import Taint, Toleration
from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.scheduler.framework.decision import SchedulingDecision
from gpuplane.scheduler.framework.pod_index import PodLabelIndex
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot, make_snapshot
from gpuplane.scheduler.framework.types import (
    GPU_MILLI,
    BoundPod,
    PodGroupInfo,
    PodInfo,
    WaitingPod,
)
from gpuplane.scheduler.plugins.registry import in_tree_registry

GIB = 2**30
PRODUCTS = ("NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "NVIDIA-L40S")
GANG_SIZE = 4
HOSTNAME = "kubernetes.io/hostname"


@dataclass
class Cluster:
    """The benchmark's own books: what a twin store keeps, reduced to the arrays."""

    names: tuple[str, ...]
    labels: tuple[dict[str, str], ...]
    taints: tuple[tuple[Taint, ...], ...]
    cordoned: np.ndarray
    cpu: np.ndarray
    mem: np.ndarray
    pods: np.ndarray
    matrix: np.ndarray
    bound: dict[str, BoundPod] = field(default_factory=dict)
    # ``bound`` by labels, kept in step as the twin's snapshot builder keeps it.
    pod_index: PodLabelIndex = field(default_factory=PodLabelIndex)
    groups: dict[str, PodGroupInfo] = field(default_factory=dict)
    waiting: tuple[WaitingPod, ...] = ()
    next_start: int = 0


def make_cluster(num_nodes: int, rng: np.random.Generator) -> Cluster:
    names = [f"gpu-{i:05d}" for i in range(num_nodes)]
    labels = [
        {"nvidia.com/gpu.product": PRODUCTS[i % 3], "nvidia.com/gpu.count": "8", HOSTNAME: name}
        for i, name in enumerate(names)
    ]
    taints: list[tuple[Taint, ...]] = []
    for _ in range(num_nodes):
        draw = rng.random()
        if draw < 0.05:
            taints.append((Taint("dedicated", "training", "NoSchedule"),))
        elif draw < 0.15:
            taints.append((Taint("spot", "true", "PreferNoSchedule"),))
        else:
            taints.append(())
    return Cluster(
        names=tuple(names),
        labels=tuple(labels),
        taints=tuple(taints),
        cordoned=rng.random(num_nodes) < 0.01,
        cpu=np.zeros(num_nodes, dtype=np.int64),
        mem=np.zeros(num_nodes, dtype=np.int64),
        pods=np.zeros(num_nodes, dtype=np.int64),
        matrix=np.full((num_nodes, 8), 1000, dtype=np.int64),
    )


def make_stream(num_pods: int, rng: np.random.Generator) -> list[PodInfo]:
    """Mixed pods; gang members come in runs of GANG_SIZE with a PodGroup each."""
    out: list[PodInfo] = []
    while len(out) < num_pods:
        draw = rng.random()
        i = len(out)
        if draw < 0.05:  # a gang of 4 x 4-GPU pods
            out.extend(_pod(f"gang{i}-{k}", rng, gpus=4, group=f"gang{i}") for k in range(4))
            continue
        if draw < 0.35:
            out.append(_pod(f"p{i}", rng, gpus=1))
        elif draw < 0.50:
            out.append(_pod(f"p{i}", rng, gpus=int(rng.choice([2, 4, 8]))))
        elif draw < 0.75:
            out.append(_pod(f"p{i}", rng, milli=int(rng.choice([100, 250, 300, 500, 700]))))
        elif draw < 0.95:
            out.append(_pod(f"p{i}", rng))
        else:
            out.append(_pod(f"p{i}", rng, gpus=8, prio=1000))
    return out[:num_pods]


def _pod(
    uid: str,
    rng: np.random.Generator,
    *,
    gpus: int = 0,
    milli: int = 0,
    prio: int = 0,
    group: str | None = None,
) -> PodInfo:
    requests = {CPU: int(rng.integers(1, 16)) * 1000, MEMORY: int(rng.integers(4, 64)) * GIB}
    if gpus:
        requests[NVIDIA_GPU] = gpus
    if milli:
        requests[GPU_MILLI] = milli
    selector = {"nvidia.com/gpu.product": PRODUCTS[0]} if rng.random() < 0.2 else {}
    tolerations = (Toleration("dedicated", "Equal", "training", "NoSchedule"),) if group else ()
    return PodInfo(
        uid=uid,
        namespace="bench",
        name=uid,
        requests=requests,
        priority=prio,
        node_selector=selector,
        tolerations=tolerations,
        pod_group=group,
        group_created_s=0.0 if group else None,
    )


def as_replica_sets(stream: list[PodInfo], size: int = 8) -> list[PodInfo]:
    """The stream's pods as members of ReplicaSets of ``size``: labels, the ReplicaSet's selector
    as default spread selector, and required anti-affinity by hostname for every 20th set."""
    out = []
    for k, pod in enumerate(stream):
        rs = k // size
        labels = {"app": f"rs{rs}", "pod-template-hash": f"h{rs}"}
        rule = None
        if rs % 20 == 0:
            term = {"labelSelector": {"matchLabels": {"app": f"rs{rs}"}}, "topologyKey": HOSTNAME}
            rule = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
        selector = from_match_fields(labels, None)
        out.append(replace(pod, labels=labels, default_spread_selector=selector, affinity=rule))
    return out


def snapshot(c: Cluster, pending: Sequence[PodInfo], now_s: float) -> ClusterSnapshot:
    for p in pending:
        key = p.group_key
        if key is not None and key not in c.groups:
            c.groups[key] = PodGroupInfo(key, GANG_SIZE, None, 0.0, GANG_SIZE, 0)
    n = len(c.names)
    return make_snapshot(
        c.names,
        allocatable={
            CPU: np.full(n, 128_000),
            MEMORY: np.full(n, 1024 * GIB),
            PODS: np.full(n, 110),
            NVIDIA_GPU: np.full(n, 8),
        },
        requested={CPU: c.cpu, MEMORY: c.mem, PODS: c.pods},
        gpu_free_milli=c.matrix.copy(),
        node_labels=c.labels,
        node_taints=c.taints,
        unschedulable=c.cordoned,
        bound_pods=c.bound,
        pod_index=c.pod_index,
        pod_groups=c.groups,
        waiting=c.waiting,
        now_s=now_s,
        next_start_index=c.next_start,
    )


def _charge(c: Cluster, pod: BoundPod, sign: int) -> None:
    i = int(pod.node[4:])
    c.cpu[i] += sign * pod.requests.get(CPU, 0)
    c.mem[i] += sign * pod.requests.get(MEMORY, 0)
    c.pods[i] += sign
    for g in pod.gpu_ids:
        c.matrix[i, g] = 0 if sign > 0 else 1000
    if pod.gpu_share is not None:
        c.matrix[i, pod.gpu_share.gpu] -= sign * pod.gpu_share.milli


def apply(c: Cluster, decision: SchedulingDecision, pods: dict[str, PodInfo], now_s: float) -> None:
    for b in decision.bindings:
        p = pods[b.pod_uid]
        bp = BoundPod(
            p.uid, p.namespace, p.name, b.node, p.priority, p.requests, now_s,
            b.gpu_ids, b.gpu_share, p.pod_group, labels=p.labels, affinity=p.affinity,
        )  # fmt: skip
        c.bound[p.uid] = bp
        c.pod_index.add(bp, bp.node)
        _charge(c, bp, 1)
        key = p.group_key
        if key is not None:
            g = c.groups[key]
            c.groups[key] = PodGroupInfo(key, g.min_member, None, 0.0, g.num_pods, g.assigned + 1)
    for pre in decision.preemptions:
        for uid in pre.victims:
            victim = c.bound.pop(uid, None)
            if victim is not None:
                c.pod_index.remove(uid)
                _charge(c, victim, -1)
    c.waiting = decision.waiting
    c.next_start = decision.next_start_index


def run(
    scheduler: Scheduler, c: Cluster, stream: list[PodInfo], batch: int
) -> tuple[float, dict[str, str], dict[str, int]]:
    """Wall seconds spent in ``decide``, where each bound pod went, and counts of failed
    attempts, preemptions and evicted pods."""
    pods = {p.uid: p for p in stream}
    counts = {"failed": 0, "preemptions": 0, "evicted": 0}
    spent = 0.0
    for start in range(0, len(stream), batch):
        pending = stream[start : start + batch]
        now_s = float(start)
        snap = snapshot(c, pending, now_s)
        t0 = time.perf_counter()
        decision = scheduler.decide(snap, pending)
        spent += time.perf_counter() - t0
        apply(c, decision, pods, now_s)
        counts["failed"] += len(decision.unschedulable)
        counts["preemptions"] += len(decision.preemptions)
        counts["evicted"] += sum(len(p.victims) for p in decision.preemptions)
    return spent, {uid: p.node for uid, p in c.bound.items()}, counts


# The default profile with FGD's fragmentation score added at weight 1 (its typical pods: the
# plugin's generic 1/2/4/8-GPU mix).
FRAGMENTATION = ProfileConfig.model_validate(
    {
        "schedulerName": "default-scheduler",
        "plugins": {"score": {"enabled": [{"name": "Fragmentation", "weight": 1}]}},
    }
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--cut", type=int, default=400)
    parser.add_argument("--spread", action="store_true", help="also as ReplicaSets' pods")
    parser.add_argument("--no-fgd", action="store_true", help="skip the Fragmentation run")
    args = parser.parse_args()
    stream = make_stream(args.pods, np.random.default_rng(7))
    fresh = lambda: make_cluster(args.nodes, np.random.default_rng(3))  # noqa: E731

    fast_s, bound, counts = run(Scheduler(registry=in_tree_registry()), fresh(), stream, args.batch)
    cut = stream[: args.cut]
    fast_cut_s, fast_cut, _ = run(Scheduler(registry=in_tree_registry()), fresh(), cut, args.batch)
    ref_cut_s, ref_cut, _ = run(
        Scheduler(registry=in_tree_registry(), reference=True), fresh(), cut, args.batch
    )
    print(f"scheduler throughput, default profile, {args.nodes:,} nodes x 8 GPUs")
    print(
        f"  vectorised, {len(stream):,} pods     : {len(stream) / fast_s:10,.0f} pods/s "
        f"({len(bound):,} bound, {fast_s:.2f} s in decide)"
    )
    print(
        f"    {counts['failed']:,} failed attempts, {counts['preemptions']:,} preemptions "
        f"evicting {counts['evicted']:,} pods"
    )
    print(
        f"  vectorised, first {len(cut):,} pods  : {len(cut) / fast_cut_s:10,.0f} pods/s "
        f"({len(fast_cut)} bound)"
    )
    print(
        f"  reference, first {len(cut):,} pods   : {len(cut) / ref_cut_s:10,.0f} pods/s "
        f"({len(ref_cut)} bound)"
    )
    print(f"  ratio (vectorised / reference) : {ref_cut_s / fast_cut_s:10.1f}x")
    print(f"  same placements on the cut     : {fast_cut == ref_cut}")
    if args.spread:
        spread_run(args, stream, fast_s)
    if args.no_fgd:
        return
    frag_s, frag_bound, frag_counts = run(
        Scheduler([FRAGMENTATION], registry=in_tree_registry()), fresh(), stream, args.batch
    )
    print("default profile plus the Fragmentation (FGD) score plugin, same stream")
    print(
        f"  vectorised, {len(stream):,} pods     : {len(stream) / frag_s:10,.0f} pods/s "
        f"({len(frag_bound):,} bound, {frag_s:.2f} s in decide; "
        f"{frag_counts['failed']:,} failed attempts)"
    )
    print(f"  cost of fragmentation scoring  : {frag_s / fast_s:10.2f}x the default profile")


def spread_run(args: argparse.Namespace, stream: list[PodInfo], plain_s: float) -> None:
    pods = as_replica_sets(stream)

    def fresh() -> Cluster:
        return make_cluster(args.nodes, np.random.default_rng(3))

    spread_s, bound, counts = run(Scheduler(registry=in_tree_registry()), fresh(), pods, args.batch)
    cut = pods[: args.cut]
    fast_cut_s, fast_cut, _ = run(Scheduler(registry=in_tree_registry()), fresh(), cut, args.batch)
    ref_cut_s, ref_cut, _ = run(
        Scheduler(registry=in_tree_registry(), reference=True), fresh(), cut, args.batch
    )
    print("default profile, the stream as ReplicaSets of 8 (default spreading, 5 % anti-affinity)")
    print(
        f"  vectorised, {len(pods):,} pods     : {len(pods) / spread_s:10,.0f} pods/s "
        f"({len(bound):,} bound, {spread_s:.2f} s in decide; {counts['failed']:,} failed attempts)"
    )
    print(f"  cost of spreading and affinity : {spread_s / plain_s:10.2f}x the plain stream")
    print(f"  reference on the cut           : {ref_cut_s / fast_cut_s:10.1f}x slower")
    print(f"  same placements on the cut     : {fast_cut == ref_cut}")


if __name__ == "__main__":
    main()
