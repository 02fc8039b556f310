"""The extender's filter and prioritize decisions on hand-built DGX H100 clusters."""

from __future__ import annotations

from gpuplane.fit.extender.assumed import AssumedPods
from gpuplane.fit.extender.decide import UNKNOWN_NODE, filter_nodes, prioritize, top_host
from gpuplane.fit.extender.needs import GpuNeeds
from gpuplane.fit.extender.node_eval import NodeEval
from gpuplane.fit.extender.settings import ExtenderSettings
from gpuplane.fit.extender.view import make_view, with_assumed, with_nodes
from gpuplane.fit.model import FitNode
from gpuplane.topology.gfd_hardware import InferredHardware
from gpuplane.topology.presets import load_preset
from tests.unit.fit.fit_factories import SNC, bound, cluster, h100, info

NO_NEEDS = GpuNeeds()


def _split_cluster() -> tuple[FitNode, FitNode]:
    # a: GPUs 3 and 7 free (one per NUMA node); b: empty.
    return h100("a", kubelet=SNC), h100("b", kubelet=SNC)


def test_numa_split_node_is_failed_with_the_kubelets_reason() -> None:
    a, b = _split_cluster()
    held = bound("held", "a", 6, ids=(0, 1, 2, 4, 5, 6))
    view = make_view(cluster(a, b, pods=(held,)))
    pod = info("p", 2, guaranteed=True)
    d = filter_nodes(view, pod, NO_NEEDS, ["a", "b"])
    assert d.kept == ("b",)
    assert d.failed == {
        "a": "2 free GPUs on different NUMA nodes (kubelet single-numa-node would reject)"
    }
    assert d.unresolvable == {}


def test_requests_no_preemption_can_help_are_unresolvable() -> None:
    a, _ = _split_cluster()
    view = make_view(cluster(a))
    five = filter_nodes(view, info("p", 5, guaranteed=True), NO_NEEDS, ["a"])
    assert five.unresolvable == {
        "a": "no NUMA node has 5 GPUs (kubelet single-numa-node can never align the pod)"
    }
    nine = filter_nodes(view, info("p", 9, guaranteed=True), NO_NEEDS, ["a"])
    assert nine.unresolvable == {"a": "node has 8 GPUs, pod asks 9"}


def test_unknown_names_are_failed_and_listed() -> None:
    view = make_view(cluster(h100("a")))
    d = filter_nodes(view, info("p", 1), NO_NEEDS, ["a", "ghost"])
    assert d.kept == ("a",)
    assert d.failed == {"ghost": UNKNOWN_NODE}
    assert d.unknown == ("ghost",)


def _pcie(name: str) -> FitNode:
    node = h100(name)
    topo = load_preset("l40s-8gpu-pcie")
    return FitNode(
        name=node.name,
        labels=node.labels,
        taints=(),
        unschedulable=False,
        allocatable=node.allocatable,
        hardware=InferredHardware(topo, "test preset l40s-8gpu-pcie", True),
    )


def test_declared_needs_filter_pcie_nodes_for_good() -> None:
    view = make_view(cluster(h100("nv"), _pcie("pcie")))
    pod = info("p", 2)
    island = filter_nodes(view, pod, GpuNeeds(nvlink_island=True), ["nv", "pcie"])
    assert island.kept == ("nv",)
    assert island.unresolvable == {"pcie": "no 2 GPUs of the node form an NVLink island"}
    ring = filter_nodes(view, pod, GpuNeeds(min_ring_gbps=300), ["nv", "pcie"])
    assert ring.kept == ("nv",)
    assert "a 300 GB/s ring" in ring.unresolvable["pcie"]


def test_needs_unmet_on_free_gpus_only_is_resolvable() -> None:
    # dgx1-v100 is a hybrid cube mesh: a free pair joined only through the CPUs.
    topo = load_preset("dgx1-v100")
    base = h100("v")
    node = FitNode("v", base.labels, (), False, base.allocatable, InferredHardware(topo, "t", True))
    held = bound("held", "v", 6, ids=(1, 2, 3, 4, 6, 7))  # free: 0 and 5, joined by SYS
    view = make_view(cluster(node, pods=(held,)))
    d = filter_nodes(view, info("p", 2), GpuNeeds(min_ring_gbps=40), ["v"])
    assert d.failed == {"v": "no 2 free GPUs form a 40 GB/s ring"}


def test_prioritize_prefers_the_wider_ring_then_the_fuller_node() -> None:
    view = make_view(
        cluster(h100("nv"), _pcie("pcie"), h100("full"), pods=(bound("x", "full", 4),))
    )
    scores = prioritize(view, info("p", 2), NO_NEEDS, ["nv", "pcie", "full"], ExtenderSettings())
    by = {s.host: s.score for s in scores}
    assert by["full"] > by["nv"] > by["pcie"]
    assert all(0 <= s <= 10 for s in by.values())
    assert top_host(scores) == "full"


def test_single_gpu_pods_score_by_packing() -> None:
    view = make_view(cluster(h100("empty"), h100("busy"), pods=(bound("x", "busy", 6),)))
    scores = prioritize(view, info("p", 1), NO_NEEDS, ["empty", "busy"], ExtenderSettings())
    assert {s.host: s.score for s in scores} == {"empty": 1, "busy": 9}


def test_failed_nodes_score_zero_and_the_cache_gives_the_same_answers() -> None:
    a, b = _split_cluster()
    view = make_view(cluster(a, b, pods=(bound("held", "a", 6, ids=(0, 1, 2, 4, 5, 6)),)))
    cache: dict[tuple[object, ...], dict[int, NodeEval]] = {}
    pod = info("p", 2, guaranteed=True)
    first = prioritize(view, pod, NO_NEEDS, ["a", "b"], ExtenderSettings(), cache)
    again = prioritize(view, pod, NO_NEEDS, ["a", "b"], ExtenderSettings(), cache)
    assert first == again
    assert dict((s.host, s.score) for s in first)["a"] == 0
    assert len(cache) == 1 and len(next(iter(cache.values()))) == 2


def test_assumed_pods_take_gpus_until_bound_or_expired() -> None:
    view = make_view(cluster(h100("a", kubelet=SNC)))
    book = AssumedPods(ttl_s=10)
    big = info("big", 8, guaranteed=True)
    book.assume(big, "a", now_s=100.0, source="bind")
    seen = with_assumed(view, book.active(105.0, view.bound_uids))
    d = filter_nodes(seen, info("p", 1, guaranteed=True), NO_NEEDS, ["a"])
    assert d.failed == {"a": "only 0 free GPUs, pod asks 1"}
    assert book.active(110.0, view.bound_uids) == ()
    book.assume(big, "a", now_s=200.0, source="prioritize")
    assert book.active(201.0, {big.uid}) == ()
    assert with_assumed(view, ()) is view


def test_with_nodes_replays_only_new_values() -> None:
    a = h100("a")
    view = make_view(cluster(a))
    assert with_nodes(view, [a]) is view
    b = h100("b")
    more = with_nodes(view, [a, b])
    assert set(more.nodes) == {"a", "b"}
    assert filter_nodes(more, info("p", 8), NO_NEEDS, ["b"]).kept == ("b",)


def test_preempt_keeps_only_nodes_where_the_victims_free_an_aligned_set() -> None:
    from gpuplane.fit.extender.preempt import preempt_nodes

    a, b = h100("a", kubelet=SNC), h100("b", kubelet=SNC)
    pods = (
        bound("a-low", "a", 1, ids=(3,)),
        bound("a-keep", "a", 6, ids=(0, 1, 2, 4, 5, 6)),
        bound("b-low", "b", 2, ids=(2, 3)),
        bound("b-keep", "b", 6, ids=(0, 1, 4, 5, 6, 7)),
    )
    view = make_view(cluster(a, b, pods=pods))
    victims = {"a": frozenset({"uid-t-a-low"}), "b": frozenset({"uid-t-b-low"}), "new": frozenset()}
    # a: evicting a-low frees GPU 3 next to free 7: one per NUMA node, rejected.
    assert preempt_nodes(view, info("p", 2, guaranteed=True), NO_NEEDS, victims) == ("b", "new")
