"""``AssumedOverlay`` (the service's view with assumed pods, kept in place) agrees with the
reference ``with_assumed`` (a copy replayed from scratch) after every step of seeded random
runs: pods judged and assumed (the overlay adds them without a replay), assumed blind (as
``bind`` does), forgotten, expired, and bound in a new cluster load."""

from __future__ import annotations

import random

import pytest

from gpuplane.fit.extender.assumed import AssumedPods
from gpuplane.fit.extender.decide import filter_nodes
from gpuplane.fit.extender.needs import GpuNeeds
from gpuplane.fit.extender.node_eval import NodeEval, pod_key
from gpuplane.fit.extender.overlay import AssumedOverlay
from gpuplane.fit.extender.view import ExtenderView, make_view, with_assumed
from gpuplane.fit.model import FitCluster, FitPod
from tests.unit.fit.fit_factories import SNC, bound, cluster, h100, info

NO_NEEDS = GpuNeeds()
NODES = ("a", "b", "c", "d", "e")


def _snapshot(view: ExtenderView) -> dict[str, tuple[object, ...]]:
    out: dict[str, tuple[object, ...]] = {}
    for name in view.nodes:
        h = view.holdings[name]
        out[name] = (
            view.keys[name],
            h.taken_gpus,
            h.taken_cpus,
            dict(h.gpus_by_pod),
            dict(h.cpus_by_pod),
            h.unknown_gpus,
        )
    return out


def _cluster(pods: tuple[FitPod, ...]) -> FitCluster:
    nodes = [h100(n, kubelet=SNC) for n in NODES[:-1]] + [h100(NODES[-1])]
    return cluster(*nodes, pods=pods)


class _Run:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        # Bound pods that name no GPU: the replay places them, before any assumed pod.
        self.pods: tuple[FitPod, ...] = (
            bound("old-a", "a", 2, start=5.0),
            bound("old-b", "b", 1, start=7.0),
            bound("old-e", "e", 4, start=3.0),
        )
        self.base = make_view(_cluster(self.pods))
        self.book = AssumedPods(ttl_s=10.0)
        self.overlay = AssumedOverlay()
        self.cache: dict[tuple[object, ...], dict[int, NodeEval]] = {}
        self.now = 0.0
        self.count = 0

    def view(self) -> ExtenderView:
        self.book.expire(self.now)
        return self.overlay.view(self.base, self.book)

    def judged(self) -> None:
        view = self.view()
        self.count += 1
        pod = info(f"p{self.count}", self.rng.choice((1, 2, 4)), guaranteed=True)
        node = self.rng.choice(NODES)
        if filter_nodes(view, pod, NO_NEEDS, [node], self.cache).kept:
            self.book.assume(pod, node, self.now, "prioritize")
            ev = self.cache[pod_key(pod, NO_NEEDS)][view.keys[node]]
            self.overlay.hint(pod.uid, node, ev)

    def blind(self) -> None:
        self.count += 1
        pod = info(f"p{self.count}", self.rng.choice((1, 2)), guaranteed=True)
        self.book.assume(pod, self.rng.choice(NODES), self.now, "bind")

    def forget(self) -> None:
        uids = [p.info.uid for n in self.book.nodes() for p in self.book.on_node(n)]
        if uids:
            self.book.forget(self.rng.choice(uids))

    def load(self) -> None:
        """One assumed pod shows bound (no GPU ids: the replay places it)."""
        held = [p for n in self.book.nodes() for p in self.book.on_node(n)]
        if held:
            p = self.rng.choice(held)
            self.pods = (*self.pods, FitPod(p.info, p.node, "Running", 100.0 + self.now))
        self.base = make_view(_cluster(self.pods), self.base)
        self.book.drop_bound(self.base.bound_uids)

    def step(self) -> None:
        roll = self.rng.random()
        if roll < 0.5:
            self.judged()
        elif roll < 0.6:
            self.blind()
        elif roll < 0.7:
            self.forget()
        elif roll < 0.85:
            self.now += self.rng.choice((1.0, 4.0))
        else:
            self.load()


@pytest.mark.parametrize("seed", range(6))
def test_overlay_agrees_with_the_reference(seed: int) -> None:
    run = _Run(seed)
    for _ in range(80):
        run.step()
        fast = _snapshot(run.view())
        reference = with_assumed(run.base, run.book.active(run.now, run.base.bound_uids))
        assert fast == _snapshot(reference)


def test_a_judged_pod_is_added_without_a_replay() -> None:
    run = _Run(0)
    run.view()
    before = dict(run.base.replays)
    run.judged()
    view = run.view()
    assert len(run.book) == 1
    assert run.base.replays == before  # no node was replayed
    node = run.book.nodes()[0]
    assert view.holdings[node] is not run.base.holdings[node]
    run.book.forget(run.book.on_node(node)[0].info.uid)
    after = run.view()
    assert after.holdings[node] is run.base.holdings[node]


def test_assumed_pods_replay_after_the_bound_ones() -> None:
    """A bound pod keeps the GPUs it was given though an assumed pod on its node was judged
    with the service's clock far below the bound pod's start time."""
    run = _Run(1)
    pod = info("late", 2, guaranteed=True)
    run.book.assume(pod, "a", now_s=0.0, source="bind")
    view = run.view()
    old = "uid-t-old-a"
    assert view.holdings["a"].gpus_by_pod[old] == run.base.holdings["a"].gpus_by_pod[old]
