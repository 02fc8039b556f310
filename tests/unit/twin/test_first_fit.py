from __future__ import annotations

import numpy as np

from gpuplane.twin.first_fit import FirstFitPlacement
from gpuplane.twin.placement import ClusterSnapshot, NodeView, PendingPod
from gpuplane.twin.spec import Taint, Toleration


def snap(
    free_gpu: list[int],
    *,
    taints: dict[int, Taint] | None = None,
    cordoned: set[int] | None = None,
    labels: dict[int, dict[str, str]] | None = None,
    groups: dict[str, tuple[int, int]] | None = None,
) -> ClusterSnapshot:
    n = len(free_gpu)
    nodes = tuple(
        NodeView(
            name=f"n{i}",
            labels=(labels or {}).get(i, {}),
            taints=((taints or {})[i],) if i in (taints or {}) else (),
            unschedulable=i in (cordoned or set()),
            ready=True,
            free_other={},
        )
        for i in range(n)
    )
    free = {
        "cpu": np.full(n, 64_000),
        "memory": np.full(n, 512 * 2**30),
        "nvidia.com/gpu": np.array(free_gpu),
        "pods": np.full(n, 110),
    }
    return ClusterSnapshot(
        nodes=nodes, free=free, schedulable=np.ones(n, dtype=bool), pod_groups=groups or {}
    )


def pod(
    uid: str,
    gpus: int,
    *,
    prio: int = 0,
    t: float = 0.0,
    group: str | None = None,
    sel: dict[str, str] | None = None,
    tol: tuple[Toleration, ...] = (),
) -> PendingPod:
    return PendingPod(
        uid=uid,
        key=f"ns/{uid}",
        requests={"nvidia.com/gpu": gpus, "cpu": 1000},
        priority=prio,
        created_s=t,
        node_selector=sel or {},
        tolerations=tol,
        affinity=None,
        pod_group=group,
    )


def test_first_fit_order_and_charging() -> None:
    d = FirstFitPlacement().decide(snap([4, 8]), [pod("a", 4), pod("b", 4), pod("c", 4)])
    assert [(b.pod_uid, b.node) for b in d.bindings] == [("a", "n0"), ("b", "n1"), ("c", "n1")]
    assert not d.unschedulable


def test_priority_beats_age() -> None:
    d = FirstFitPlacement().decide(snap([4]), [pod("old", 4, t=0), pod("vip", 4, prio=100, t=9)])
    assert [b.pod_uid for b in d.bindings] == ["vip"]
    assert d.unschedulable[0].pod_uid == "old"


def test_fit_error_text_like_kube_scheduler() -> None:
    s = snap(
        [1, 8, 8, 8],
        taints={1: Taint("nvidia.com/gpu", "b200", "NoSchedule")},
        cordoned={2},
        labels={0: {"zone": "a"}, 3: {"zone": "b"}},
    )
    d = FirstFitPlacement().decide(s, [pod("x", 2, sel={"zone": "a"})])
    assert d.unschedulable[0].message == (
        "0/4 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's "
        "node affinity/selector, 1 node(s) had untolerated taint {nvidia.com/gpu: b200}, "
        "1 node(s) were unschedulable."
    )


def test_toleration_lets_the_pod_in() -> None:
    s = snap([8], taints={0: Taint("nvidia.com/gpu", "b200", "NoSchedule")})
    tol = (Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule"),)
    assert FirstFitPlacement().decide(s, [pod("x", 2, tol=tol)]).bindings


def test_gang_all_or_nothing() -> None:
    s = snap([4, 4], groups={"g": (3, 0)})
    members = [pod(f"m{i}", 4, group="g") for i in range(3)]
    d = FirstFitPlacement().decide(s, members)
    assert not d.bindings and len(d.unschedulable) == 3
    assert "all or nothing" in d.unschedulable[0].message
    d2 = FirstFitPlacement().decide(snap([4, 4, 4], groups={"g": (3, 0)}), members)
    assert len(d2.bindings) == 3


def test_gang_waits_for_min_member() -> None:
    d = FirstFitPlacement().decide(snap([8], groups={"g": (4, 0)}), [pod("m0", 1, group="g")])
    assert "minMember of group: 4" in d.unschedulable[0].message
