from __future__ import annotations

from typing import Any

from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.types import BoundPod, NominatedPod
from gpuplane.scheduler.plugins.default_preemption import pick_one_node
from tests.unit.scheduler.factories import (
    GPUPLANE,
    bound,
    make_cluster,
    make_pod,
    make_scheduler,
    matrix_with,
)


def cluster(pods: list[BoundPod], n: int, **kw: Any) -> ClusterSnapshot:
    return make_cluster([8] * n, matrix=matrix_with(pods, n), bound_pods=pods, **kw)


def test_minimal_victims_are_the_least_important() -> None:
    pods = [
        bound("old", "n0", (0, 1, 2, 3), prio=1, start_s=5.0),
        bound("young", "n0", (4, 5, 6, 7), prio=1, start_s=10.0),
        bound("mid", "n1", tuple(range(8)), prio=50),
    ]
    d = make_scheduler().decide(cluster(pods, 2), [make_pod("vip", 4, prio=100)])
    # One 4-GPU victim is enough; of two equal-priority pods the one running longer stays.
    assert [(p.node, p.victims) for p in d.preemptions] == [("n0", ("young",))]
    failure = d.unschedulable[0]
    assert failure.nominated_node == "n0"
    assert failure.message == "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."


def test_node_choice_prefers_lower_priority_victims_then_fewer() -> None:
    low = [bound("a", "n0", tuple(range(8)), prio=10)]
    many = [bound(f"b{i}", "n1", (2 * i, 2 * i + 1), prio=5) for i in range(4)]
    d = make_scheduler().decide(cluster(low + many, 2), [make_pod("vip", 8, prio=100)])
    assert d.preemptions[0].node == "n1"  # its most important victim has priority 5 < 10
    same = [bound("c", "n0", tuple(range(8)), prio=5)]
    d = make_scheduler().decide(cluster(same + many, 2), [make_pod("vip", 8, prio=100)])
    assert d.preemptions[0].node == "n0"  # same top priority: lower sum of priorities wins


def test_pick_one_node_breaks_ties_by_latest_start() -> None:
    early = [bound("e", "n0", prio=1, start_s=1.0)]
    late = [bound("l", "n1", prio=1, start_s=9.0)]
    assert pick_one_node([(0, early), (1, late)])[0] == 1
    assert pick_one_node([(0, late), (1, late)])[0] == 0  # full tie: the first node


def test_no_victims_and_not_helpful() -> None:
    pods = [bound("peer", "n0", tuple(range(8)), prio=100)]
    snap = cluster(pods, 2, cordoned=[1])
    d = make_scheduler().decide(snap, [make_pod("vip", 8, prio=100)])
    assert not d.preemptions
    assert d.unschedulable[0].message == (
        "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) were unschedulable. "
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling."
    )
    assert d.unschedulable[0].clear_nomination


def test_victims_that_would_not_help_are_not_evicted() -> None:
    # Removing the low-priority pod frees 4 GPUs, the pod needs 8: the filter's reason is kept.
    pods = [bound("low", "n0", (0, 1, 2, 3), prio=1), bound("high", "n0", (4, 5, 6, 7), prio=500)]
    d = make_scheduler().decide(cluster(pods, 1), [make_pod("vip", 8, prio=100)])
    assert not d.preemptions
    assert "preemption: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu." in (
        d.unschedulable[0].message
    )


def test_preemption_policy_never() -> None:
    pods = [bound("low", "n0", tuple(range(8)), prio=1)]
    d = make_scheduler().decide(
        cluster(pods, 1),
        [make_pod("vip", 8, prio=100, preemption_policy="Never")],
    )
    assert "preemption: not eligible due to preemptionPolicy=Never." in d.unschedulable[0].message


def test_lower_priority_nominations_on_the_node_are_cleared() -> None:
    pods = [bound("low", "n0", tuple(range(8)), prio=1)]
    waiting_low = make_pod("mid", 8, prio=10, nominated="n0")
    snap = cluster(pods, 1, nominated=[NominatedPod(waiting_low, "n0")])
    d = make_scheduler().decide(snap, [make_pod("vip", 8, prio=100)])
    assert d.preemptions[0].victims == ("low",)
    assert d.cleared_nominations == ("mid",)


def test_fractional_victims() -> None:
    from gpuplane.scheduler.framework.types import GpuShare

    pods = [bound(f"s{g}", "n0", share=GpuShare(g, 600), prio=1) for g in range(8)]
    d = make_scheduler([GPUPLANE]).decide(cluster(pods, 1), [make_pod("vip", milli=700, prio=100)])
    assert d.preemptions[0].victims == ("s7",)  # one share is enough; ties go by uid
