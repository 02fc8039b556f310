"""decide(): one scheduling cycle per pending pod, seeing what the previous ones assumed."""

from __future__ import annotations

import numpy as np

from gpuplane.api.taints import Toleration
from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.scheduler.framework.types import NominatedPod
from tests.unit.scheduler.factories import make_cluster, make_pod, make_scheduler


def test_pods_are_charged_in_order() -> None:
    snap = make_cluster([4, 8], used_cpu_m=[0, 32_000])  # n0 scores higher while it has room
    d = make_scheduler().decide(snap, [make_pod(u, 4) for u in "abc"])
    assert [(b.pod_uid, b.node) for b in d.bindings] == [("a", "n0"), ("b", "n1"), ("c", "n1")]
    assert [b.gpu_ids for b in d.bindings] == [(0, 1, 2, 3), (0, 1, 2, 3), (4, 5, 6, 7)]
    assert not d.unschedulable


def test_least_allocated_spreads_and_most_allocated_packs() -> None:
    snap = make_cluster([8, 8], used_cpu_m=[32_000, 0])
    least = make_scheduler().decide(snap, [make_pod("a", 1)])
    assert least.bindings[0].node == "n1"
    # BalancedAllocation is off here: it would score n1 (cpu and memory both near 0) as high as
    # MostAllocated lifts n0, and this is about NodeResourcesFit's strategies.
    packing = ProfileConfig.model_validate(
        {
            "plugins": {"score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]}},
            "pluginConfig": [
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
            ],
        }
    )
    most = make_scheduler([packing]).decide(snap, [make_pod("a", 1)])
    assert most.bindings[0].node == "n0"


def test_decide_leaves_the_snapshot_alone() -> None:
    snap = make_cluster([8, 8])
    before = (snap.requested.copy(), snap.gpu_free_milli.copy())
    make_scheduler().decide(snap, [make_pod("a", 8), make_pod("b", 8)])
    assert np.array_equal(snap.requested, before[0])
    assert np.array_equal(snap.gpu_free_milli, before[1])


def test_a_toleration_lets_the_pod_in() -> None:
    from gpuplane.api.taints import Taint

    snap = make_cluster([8], taints={0: [Taint("nvidia.com/gpu", "b200", "NoSchedule")]})
    tol = (Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule"),)
    assert make_scheduler().decide(snap, [make_pod("x", 2, tol=tol)]).bindings
    assert not make_scheduler().decide(snap, [make_pod("x", 2)]).bindings


def test_round_robin_start_moves_past_the_processed_nodes() -> None:
    # 200 nodes, 10%: the search stops at the 101st feasible node; the next one starts there.
    snap = make_cluster([8] * 200)
    cfg = ProfileConfig(percentageOfNodesToScore=10)
    d = make_scheduler([cfg]).decide(snap, [make_pod("a", 1)])
    assert d.next_start_index == 100
    d2 = make_scheduler([cfg]).decide(
        make_cluster([8] * 200, next_start_index=150), [make_pod("a", 1)]
    )
    chosen = int(d2.bindings[0].node[1:])
    assert chosen >= 150 or chosen < 50  # among the 100 nodes from the start, wrapping around
    assert d2.next_start_index == 50


def test_equal_scores_are_shared_out_by_pod() -> None:
    snap = make_cluster([8] * 4)
    nodes = {
        make_scheduler().decide(snap, [make_pod(f"p{k}", 1)]).bindings[0].node for k in range(40)
    }
    assert len(nodes) == 4  # kube-scheduler picks among ties at random; gpuplane by uid


def test_the_nominated_node_is_tried_first() -> None:
    snap = make_cluster([8, 8, 8])
    d = make_scheduler().decide(snap, [make_pod("a", 1, nominated="n2")])
    assert d.bindings[0].node == "n2"


def test_lower_priority_pods_leave_room_for_a_nominated_pod() -> None:
    vip = make_pod("vip", 8, prio=100, nominated="n1")
    snap = make_cluster([8, 8], nominated=[NominatedPod(vip, "n1")], used_cpu_m=[0, 0])
    low = make_scheduler().decide(snap, [make_pod("low", 8), make_pod("low2", 8)])
    assert [(b.pod_uid, b.node) for b in low.bindings] == [("low", "n0")]
    assert "Insufficient nvidia.com/gpu" in low.unschedulable[0].message
    equal = make_scheduler().decide(
        snap, [make_pod("peer", 8, prio=100), make_pod("p2", 8, prio=100)]
    )
    assert {b.node for b in equal.bindings} == {"n0"}  # equal priority yields too


def test_same_pods_fail_the_same_way() -> None:
    snap = make_cluster([1, 1])
    d = make_scheduler().decide(snap, [make_pod("a", 4), make_pod("b", 4)])
    assert len(d.unschedulable) == 2
    assert d.unschedulable[0].message == d.unschedulable[1].message


def test_profiles_by_scheduler_name() -> None:
    profiles = [ProfileConfig(), ProfileConfig(schedulerName="gpu-packer")]
    scheduler = make_scheduler(profiles)
    assert scheduler.handles("gpu-packer") and not scheduler.handles("other")
    d = scheduler.decide(make_cluster([8]), [make_pod("a", 1, scheduler="gpu-packer")])
    assert d.bindings
    d = scheduler.decide(make_cluster([8]), [make_pod("b", 1, scheduler="other")])
    assert d.unschedulable[0].message == "profile not found for scheduler name 'other'"


def test_no_nodes() -> None:
    snap = make_cluster([])
    d = make_scheduler().decide(snap, [make_pod("a")])
    assert d.unschedulable[0].message == (
        "0/0 nodes are available: no nodes available to schedule pods."
    )
