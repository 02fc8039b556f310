"""Assumed holdings: named GPUs are kept, unnamed ones replayed by the kubelet's algorithms,
and the uncertainty counted as "any k of the node's other GPUs"."""

from __future__ import annotations

import math

from gpuplane.fit.holdings import ReplayCache, possible_free_sets, replay_node
from tests.unit.fit.fit_factories import SNC, bound, h100


def test_named_gpus_are_held_and_the_rest_replayed() -> None:
    node = h100("n")
    pods = (bound("a", "n", 2, ids=(6, 7)), bound("b", "n", 2, start=1.0))
    h = replay_node(node, pods)
    assert h.gpus_by_pod["uid-t-a"] == (6, 7)
    assert len(h.gpus_by_pod["uid-t-b"]) == 2 and not set(h.gpus_by_pod["uid-t-b"]) & {6, 7}
    assert h.known == frozenset({6, 7}) and h.unknown_gpus == 2 and h.uncertain


def test_possible_free_sets_are_every_choice_of_the_unnamed_gpus() -> None:
    node = h100("n")
    h = replay_node(node, (bound("a", "n", 2, ids=(0, 1)), bound("b", "n", 3)))
    sets, total = possible_free_sets(8, h)
    listed = list(sets)
    assert total == math.comb(6, 3) == len(listed)
    assert all(len(s) == 3 and not s & {0, 1} for s in listed)


def test_replay_under_single_numa_node_keeps_a_pod_on_one_numa_node() -> None:
    node = h100("n", kubelet=SNC)
    h = replay_node(node, (bound("a", "n", 4),))
    ids = h.gpus_by_pod["uid-t-a"]
    assert set(ids) in ({0, 1, 2, 3}, {4, 5, 6, 7})


def test_cached_replay_equals_a_fresh_one() -> None:
    cache: ReplayCache = {}
    pods = (bound("a", "n", 1), bound("b", "n", 2, start=2.0))
    fresh = replay_node(h100("n"), pods)
    first = replay_node(h100("n"), pods, cache)
    again = replay_node(h100("n"), pods, cache)
    assert fresh.gpus_by_pod == first.gpus_by_pod == again.gpus_by_pod
    assert len(cache) == 1


def test_a_node_without_hardware_counts_only() -> None:
    h = replay_node(h100("n", hardware=False), (bound("a", "n", 3),))
    assert h.gpus_by_pod["uid-t-a"] == (0, 1, 2) and h.unknown_gpus == 3
