"""``answer_fit`` on hand-built clusters, against kube-scheduler's documented behaviour: the
FitError text, DefaultPreemption's victims, the kubelet's Topology Manager verdict, and what
would make a pod fit."""

from __future__ import annotations

from gpuplane.fit.answer import answer_fit
from gpuplane.fit.result import Outcome
from gpuplane.fit.workload import FitSettings
from tests.unit.fit.fit_factories import (
    SNC,
    bound,
    cluster,
    default_scheduler,
    h100,
    info,
    workload,
)


def test_a_tp4_pod_gets_four_nvlink_gpus_of_one_numa_node() -> None:
    c = cluster(h100("a"), pods=(bound("x", "a", 2, ids=(0, 1)),))
    a = answer_fit(default_scheduler(), c, workload(info("p", 4)))
    p = a.pods[0]
    assert p.outcome is Outcome.FITS and p.node == "a"
    assert p.gpus is not None and p.gpus.kubelet is not None and p.gpus.gpuplane is not None
    assert set(p.gpus.gpuplane.gpus) == {4, 5, 6, 7}
    assert p.gpus.gpuplane.numa_nodes == (1,)
    assert p.gpus.gpuplane.bottleneck_gbps == 450.0  # NVSwitch: 18 NVLink 4 links x 25 GB/s
    assert not p.gpus.uncertain and a.all_fit


def test_fit_error_is_kube_schedulers_text() -> None:
    c = cluster(h100("a"), h100("b"), pods=(bound("x", "a", 6), bound("y", "b", 6)))
    a = answer_fit(default_scheduler(), c, workload(info("p", 4)))
    p = a.pods[0]
    assert p.outcome is Outcome.UNSCHEDULABLE
    assert p.fit_error == (
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are "
        "available: 2 No preemption victims found for incoming pod."
    )
    (group,) = p.node_reasons
    assert group.reasons == ("NodeResourcesFit: Insufficient nvidia.com/gpu",)
    assert "2 nodes with 2 free" in group.detail


def test_preemption_takes_the_node_with_the_lowest_priority_victims() -> None:
    c = cluster(
        h100("a"),
        h100("b"),
        pods=(bound("hi", "a", 8, priority=500), bound("lo", "b", 8, priority=10)),
    )
    a = answer_fit(default_scheduler(), c, workload(info("p", 8, priority=1000)))
    p = a.pods[0]
    assert p.outcome is Outcome.FITS_AFTER_PREEMPTION
    assert p.node == "b" and p.preempt_node == "b"
    assert [v.pod for v in p.victims] == ["t/lo"]
    assert a.remedies[0].kind == "preemption"


def test_single_numa_node_rejects_gpus_split_over_numa_nodes() -> None:
    c = cluster(
        h100("a", kubelet=SNC),
        pods=(bound("x", "a", 3, ids=(0, 1, 2)), bound("y", "a", 3, ids=(5, 6, 7))),
    )
    a = answer_fit(default_scheduler(), c, workload(info("p", 2, guaranteed=True)))
    p = a.pods[0]
    assert p.outcome is Outcome.REJECTED_BY_KUBELET and p.node == "a"
    assert p.kubelet is not None and p.kubelet.reason == "TopologyAffinityError"
    assert p.kubelet.message == (
        "Pod was rejected: Resources cannot be allocated with Topology locality"
    )
    assert "1 on NUMA 0, 1 on NUMA 1" in p.kubelet.explanation


def test_unnamed_holdings_give_a_bandwidth_range() -> None:
    c = cluster(h100("a"), pods=(bound("x", "a", 4),))
    p = answer_fit(default_scheduler(), c, workload(info("p", 4))).pods[0]
    assert p.gpus is not None and p.gpus.uncertain
    assert p.gpus.holdings_possible == 70  # any 4 of 8
    assert p.gpus.bottleneck_range_gbps == (450.0, 450.0)  # NVSwitch: every set is as good


def test_defragmentation_moves_a_pod_to_make_room() -> None:
    c = cluster(
        h100("a"),
        h100("b"),
        pods=(bound("x", "a", 2), bound("y", "b", 4), bound("z", "a", 4, start=1.0)),
    )
    a = answer_fit(default_scheduler(), c, workload(info("p", 4), info("q", 4)))
    assert [p.outcome for p in a.pods].count(Outcome.FITS) == 1
    (fix,) = [r for r in a.remedies if r.kind == "defragment"]
    assert fix.fits_after == 1
    (move,) = fix.moves
    assert move.pod == "t/x" and move.from_node == "a" and move.to_node == "b"


def test_bare_pods_are_never_moved() -> None:
    c = cluster(h100("a"), pods=(bound("x", "a", 6, owner=None),))
    a = answer_fit(default_scheduler(), c, workload(info("p", 4)))
    assert not [r for r in a.remedies if r.kind == "defragment"]


def test_capacity_counts_how_many_more_fit() -> None:
    c = cluster(h100("a"), h100("b"), pods=(bound("x", "a", 4),))
    a = answer_fit(default_scheduler(), c, workload(info("p", 2)), FitSettings(capacity_limit=50))
    (cap,) = a.capacity
    assert cap.max_replicas == 6 and not cap.capped  # 4 + 8 free GPUs, 2 each


def test_capacity_stops_at_the_limit() -> None:
    c = cluster(h100("a"), h100("b"))
    a = answer_fit(default_scheduler(), c, workload(info("p", 1)), FitSettings(capacity_limit=5))
    assert a.capacity[0].max_replicas == 5 and a.capacity[0].capped


def test_cordoned_and_tainted_nodes_are_explained() -> None:
    from gpuplane.api.taints import Taint

    c = cluster(h100("a", unschedulable=True), h100("b", taints=(Taint("gpu", "x"),)))
    p = answer_fit(default_scheduler(), c, workload(info("p", 1))).pods[0]
    assert p.fit_error is not None and p.fit_error.startswith(
        "0/2 nodes are available: 1 node(s) had untolerated taint {gpu: x}, "
        "1 node(s) were unschedulable."
    )


def test_kubelet_rejection_names_the_nodes_that_would_admit() -> None:
    c = cluster(
        h100("a", kubelet=SNC),
        h100("b", kubelet=SNC),
        pods=(
            bound("x", "a", 3, ids=(0, 1, 2)),
            bound("y", "a", 3, ids=(5, 6, 7)),
            bound("z", "b", 6, ids=(0, 1, 2, 3, 4, 5), cpu=150_000),
        ),
    )
    # Both nodes have 2 free GPUs: a's split over NUMA nodes, b's (6, 7) on NUMA 1; b's CPUs
    # are busier, so kube's LeastAllocated scoring prefers a.
    a = answer_fit(default_scheduler(), c, workload(info("p", 2, guaranteed=True)))
    p = a.pods[0]
    assert p.outcome is Outcome.REJECTED_BY_KUBELET and p.node == "a"
    (fix,) = [r for r in a.remedies if r.kind == "kubelet-aligned-nodes"]
    assert "admit it on b" in fix.summary and fix.fits_after == 1
    assert a.capacity[0].max_replicas == 1  # only b's kubelet admits a copy


def test_required_anti_affinity_keeps_replicas_apart() -> None:
    from dataclasses import replace

    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": "w"}},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }
    pods = [replace(info(f"w-{i}", 1), labels={"app": "w"}, affinity=anti) for i in range(3)]
    a = answer_fit(default_scheduler(), cluster(h100("a"), h100("b")), workload(*pods))
    assert {p.node for p in a.pods[:2]} == {"a", "b"}
    last = a.pods[2]
    assert last.outcome is Outcome.UNSCHEDULABLE
    assert last.fit_error is not None and last.fit_error.startswith(
        "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules."
    )
