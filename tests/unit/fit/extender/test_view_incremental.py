"""``make_view(cluster, previous)``: only nodes whose object or pods changed are replayed, and
the result equals a view made from scratch."""

from __future__ import annotations

from gpuplane.fit.extender.view import ExtenderView, make_view
from gpuplane.fit.model import FitCluster
from tests.unit.fit.fit_factories import SNC, bound, cluster, h100


def _same(a: ExtenderView, b: ExtenderView) -> None:
    assert a.nodes == b.nodes
    assert a.pods_by_node == b.pods_by_node
    assert a.bound_uids == b.bound_uids
    for name in a.nodes:
        assert a.holdings[name].taken_gpus == b.holdings[name].taken_gpus
        assert a.holdings[name].taken_cpus == b.holdings[name].taken_cpus


def _base() -> FitCluster:
    a, b, c = h100("a", kubelet=SNC), h100("b", kubelet=SNC), h100("c", kubelet=SNC)
    return cluster(a, b, c, pods=(bound("x", "a", 2, ids=(0, 1)),))


def test_a_pod_bound_replays_only_its_node() -> None:
    before = _base()
    first = make_view(before)
    pods = (*before.pods, bound("y", "b", 4, ids=(0, 1, 2, 3)))
    after = cluster(*before.nodes, pods=pods)
    view = make_view(after, first)
    _same(view, make_view(after))
    assert view.holdings["a"] is first.holdings["a"]
    assert view.holdings["c"] is first.holdings["c"]
    assert view.holdings["b"] is not first.holdings["b"]
    assert view.interned is first.interned
    assert view.keys["b"] != first.keys["b"]


def test_a_changed_node_object_and_a_removed_node() -> None:
    before = _base()
    first = make_view(before)
    a = before.nodes[0]
    new_c = h100("c", kubelet=SNC)
    after = cluster(a, new_c, pods=before.pods)
    view = make_view(after, first)
    _same(view, make_view(after))
    assert set(view.nodes) == {"a", "c"}
    assert view.holdings["a"] is first.holdings["a"]
    assert view.holdings["c"] is not first.holdings["c"]
    assert view.keys["c"] == first.keys["c"]  # the same state: the same interned key


def test_a_pod_gone_frees_its_gpus() -> None:
    before = _base()
    first = make_view(before)
    after = cluster(*before.nodes, pods=())
    view = make_view(after, first)
    _same(view, make_view(after))
    assert view.holdings["a"].taken_gpus != first.holdings["a"].taken_gpus
    assert view.keys["a"] == first.keys["b"]
