"""The vectorised framework and the per-node reference decide alike on random clusters: the same
nodes, devices, preemptions, failure messages and round-robin start."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.api.taints import Taint, Toleration
from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.scheduler.framework.decision import SchedulingDecision
from gpuplane.scheduler.framework.types import BoundPod, GpuShare, PodInfo
from tests.unit.scheduler.factories import (
    bound,
    make_cluster,
    make_pod,
    make_scheduler,
    matrix_with,
)

TAINTS = [
    Taint("nvidia.com/gpu", "b200", "NoSchedule"),
    Taint("spot", "true", "PreferNoSchedule"),
    Taint("maint", "", "NoExecute"),
]
TOLERATIONS = [
    Toleration("nvidia.com/gpu", "Exists", None, "NoSchedule"),
    Toleration("spot", "Equal", "true", "PreferNoSchedule"),
    Toleration(None, "Exists", None, None),
]
PRODUCTS = ["H100", "A100", "L40S"]


@st.composite
def node_pods(draw: Any, i: int) -> list[BoundPod]:
    """Pods already on node ``i``: whole GPUs from the front, shares on the rest."""
    out: list[BoundPod] = []
    next_gpu = 0
    for k in range(draw(st.integers(0, 4))):
        prio = draw(st.sampled_from([0, 10, 100]))
        kind = draw(st.sampled_from(["whole", "share", "cpu"]))
        uid = f"b{i}-{k}"
        if kind == "whole" and next_gpu < 6:
            n = draw(st.integers(1, 2))
            ids = tuple(range(next_gpu, next_gpu + n))
            next_gpu += n
            out.append(bound(uid, f"n{i}", ids, prio=prio, start_s=float(k), cpu_m=2000))
        elif kind == "share":
            out.append(
                bound(uid, f"n{i}", prio=prio, share=GpuShare(7, draw(st.sampled_from([200, 400]))))
            )
        else:
            out.append(bound(uid, f"n{i}", prio=prio, start_s=float(k), cpu_m=4000))
    return out


@st.composite
def clusters(draw: Any, max_nodes: int = 12) -> Any:
    n = draw(st.integers(1, max_nodes))
    pods: list[BoundPod] = []
    for i in range(n):
        pods.extend(draw(node_pods(i)))
    matrix = matrix_with(pods, n)
    shares = [p for p in pods if p.gpu_share is not None]
    for i in range(n):  # two shares on one GPU may overflow it: keep the drawn ones that fit
        used = sum(p.gpu_share.milli for p in shares if p.node == f"n{i}" and p.gpu_share)
        if used > 1000:
            pods = [p for p in pods if p.node != f"n{i}" or p.gpu_share is None]
    matrix = matrix_with(pods, n)
    taints = {i: draw(st.lists(st.sampled_from(TAINTS), max_size=2, unique=True)) for i in range(n)}
    labels = {i: {"gpu": draw(st.sampled_from(PRODUCTS))} for i in range(n)}
    cordoned = [i for i in range(n) if draw(st.booleans()) and draw(st.booleans())]
    return make_cluster(
        [8] * n,
        matrix=matrix,
        bound_pods=pods,
        taints=taints,
        labels=labels,
        cordoned=cordoned,
        cpu_m=draw(st.sampled_from([8000, 16000])),
        pods=draw(st.sampled_from([3, 110])),
        next_start_index=draw(st.integers(0, n)),
    )


@st.composite
def pending(draw: Any) -> list[PodInfo]:
    out = []
    for k in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["whole", "share", "cpu"]))
        preferred = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": draw(st.integers(1, 50)),
                        "preference": {
                            "matchExpressions": [
                                {"key": "gpu", "operator": "In", "values": ["H100"]}
                            ]
                        },
                    }
                ]
            }
        }
        out.append(
            make_pod(
                f"p{k}",
                draw(st.integers(1, 8)) if kind == "whole" else 0,
                milli=draw(st.sampled_from([100, 500, 900])) if kind == "share" else 0,
                cpu_m=draw(st.sampled_from([500, 3000, 9000])),
                prio=draw(st.sampled_from([0, 50, 1000])),
                sel={"gpu": draw(st.sampled_from(PRODUCTS))} if draw(st.booleans()) else None,
                tol=tuple(draw(st.lists(st.sampled_from(TOLERATIONS), max_size=2, unique=True))),
                affinity=preferred if draw(st.booleans()) else None,
            )
        )
    return out


def summary(d: SchedulingDecision) -> tuple[object, ...]:
    return (
        [(b.pod_uid, b.node, b.gpu_ids, b.gpu_share) for b in d.bindings],
        [(u.pod_uid, u.message, u.nominated_node) for u in d.unschedulable],
        [(p.preemptor_uid, p.node, p.victims) for p in d.preemptions],
        d.next_start_index,
    )


@settings(max_examples=150, deadline=None)
@given(snap=clusters(), pods=pending())
def test_fast_and_reference_agree(snap: Any, pods: list[PodInfo]) -> None:
    fast = make_scheduler().decide(snap, pods)
    reference = make_scheduler(reference=True).decide(snap, pods)
    assert summary(fast) == summary(reference)


@settings(max_examples=10, deadline=None)
@given(snap=clusters(), pods=pending(), most=st.booleans())
def test_agree_with_most_allocated(snap: Any, pods: list[PodInfo], most: bool) -> None:
    strategy = "MostAllocated" if most else "LeastAllocated"
    cfg = ProfileConfig.model_validate(
        {
            "pluginConfig": [
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": strategy}}}
            ]
        }
    )
    assert summary(make_scheduler([cfg]).decide(snap, pods)) == summary(
        make_scheduler([cfg], reference=True).decide(snap, pods)
    )


@settings(max_examples=5, deadline=None)
@given(start=st.integers(0, 249), seed=st.integers(0, 1000))
def test_agree_on_a_large_cluster_with_partial_search(start: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    gpus = [int(g) for g in rng.integers(0, 9, size=250)]
    snap = make_cluster(gpus, next_start_index=start, used_cpu_m=list(rng.integers(0, 60_000, 250)))
    pods = [make_pod(f"p{k}", int(rng.integers(1, 9))) for k in range(12)]
    cfg = ProfileConfig(percentageOfNodesToScore=10)
    assert summary(make_scheduler([cfg]).decide(snap, pods)) == summary(
        make_scheduler([cfg], reference=True).decide(snap, pods)
    )
