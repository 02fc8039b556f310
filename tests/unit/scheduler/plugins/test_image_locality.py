"""ImageLocality: scores hand-computed from kube-scheduler v1.31's image_locality.go (size x
share of nodes holding the image, summed over init and app containers, clamped to [23 MiB,
1000 MiB x containers], mapped onto [0, 100] and truncated). Several cases are the ones of
upstream's image_locality_test.go, with the arithmetic written out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as hs

from gpuplane.scheduler.framework.images import make_image_states
from gpuplane.scheduler.framework.types import ContainerInfo, PodInfo
from gpuplane.scheduler.plugins.image_locality import (
    calculate_priority,
    normalized_image_name,
)
from tests.unit.scheduler.factories import make_cluster, make_pod, make_scheduler
from tests.unit.scheduler.plugins.helpers import plugin, state

MIB = 1024 * 1024
DIGEST = "sha256:" + "ab" * 32


def pod_with(*images: str, init: Sequence[str] = ()) -> PodInfo:
    containers = (
        *(ContainerInfo(f"init{i}", init=True, image=im) for i, im in enumerate(init)),
        *(ContainerInfo(f"c{i}", image=im) for i, im in enumerate(images)),
    )
    return replace(make_pod("p"), containers=containers)


def scores(node_images: Sequence[Mapping[str, int]], pod: PodInfo) -> list[int]:
    """Every node's score, batched; checked against the per-node reference."""
    il = plugin("ImageLocality")
    snap = make_cluster([8] * len(node_images), node_images=node_images)
    cs, st = state(snap)
    fast: list[int] = il.score(cs, pod, st, np.arange(st.num_nodes)).tolist()
    assert fast == [il.score_node(cs, pod, st, i) for i in range(st.num_nodes)]
    return fast


# Nodes of upstream's test, by the images they hold (sizes in MiB).
N_40_300_2000 = {
    "gcr.io/40:latest": 40 * MIB,
    "gcr.io/40:v1": 40 * MIB,
    "gcr.io/300:latest": 300 * MIB,
    "gcr.io/300:v1": 300 * MIB,
    "gcr.io/2000:latest": 2000 * MIB,
}
N_250_10 = {"gcr.io/250:latest": 250 * MIB, "gcr.io/10:latest": 10 * MIB, "gcr.io/10:v1": 10 * MIB}
N_4000_30 = {"gcr.io/4000:latest": 4000 * MIB, "gcr.io/30:latest": 30 * MIB}
N_600_40_900 = {
    "gcr.io/600:latest": 600 * MIB,
    "gcr.io/40:latest": 40 * MIB,
    "gcr.io/900:latest": 900 * MIB,
}
N_300_600_900 = {
    "gcr.io/300:latest": 300 * MIB,
    "gcr.io/600:latest": 600 * MIB,
    "gcr.io/900:latest": 900 * MIB,
}
N_20_30_40 = {
    "gcr.io/20:latest": 20 * MIB,
    "gcr.io/30:latest": 30 * MIB,
    "gcr.io/40:latest": 40 * MIB,
}


def test_two_nodes_with_different_images_prefer_the_larger_one() -> None:
    # Each image on one of two nodes (spread 1/2); 2 containers: range [23, 2000] MiB.
    # n0: 40/2 = 20 MiB < 23 -> 0.  n1: 250/2 = 125 -> 100 * 102 / 1977 = 5.2 -> 5.
    assert scores([N_40_300_2000, N_250_10], pod_with("gcr.io/40", "gcr.io/250")) == [0, 5]
    # Both images on n0: (40 + 300) / 2 = 170 -> 100 * 147 / 1977 = 7.4 -> 7; n1 none -> 0.
    assert scores([N_40_300_2000, N_250_10], pod_with("gcr.io/40", "gcr.io/300")) == [7, 0]


def test_a_node_without_the_images_scores_zero() -> None:
    assert scores([{}, {}], pod_with("gcr.io/40")) == [0, 0]
    assert scores([N_250_10, {}], pod_with("other/image:1")) == [0, 0]


def test_spread_scales_an_image_by_the_share_of_nodes_holding_it() -> None:
    # Two 600 MiB images of one container each: a:1 on two of three nodes, b:1 on one.
    # a:1 on n0, n1: 600 x 2/3 = 400 MiB -> 100 * 377 / 977 = 38.6 -> 38.
    # b:1 on n2: 600 x 1/3 = 200 MiB -> 100 * 177 / 977 = 18.1 -> 18: the rarer image counts less.
    nodes = [{"a:1": 600 * MIB}, {"a:1": 600 * MIB}, {"b:1": 600 * MIB}]
    assert scores(nodes, pod_with("a:1")) == [38, 38, 0]
    assert scores(nodes, pod_with("b:1")) == [0, 0, 18]


def test_thresholds_clamp_the_sum() -> None:
    # 4000/2 = 2000 MiB reaches the upper bound of 2 containers -> 100; 10/2 = 5 MiB -> 0.
    pod = pod_with("gcr.io/10", "gcr.io/4000")
    assert scores([N_4000_30, N_250_10], pod) == [100, 0]
    # With a third node (without images) the spread is 1/3: 4000/3 = 1333.3 MiB
    # -> 100 * 1310.3 / 1977 = 66.3 -> 66.
    assert scores([N_4000_30, N_250_10, {}], pod) == [66, 0, 0]
    # One container: the upper bound is 1000 MiB; an image everywhere counts in full.
    assert scores([{"big:1": 5000 * MIB}] * 2, pod_with("big:1")) == [100, 100]
    assert scores([{"tiny:1": 23 * MIB}] * 2, pod_with("tiny:1")) == [0, 0]


def test_calculate_priority_edges() -> None:
    assert calculate_priority(0, 1) == 0
    assert calculate_priority(23 * MIB, 1) == 0
    assert calculate_priority(1000 * MIB, 1) == 100
    assert calculate_priority(10**12, 3) == 100
    # (511.5 - 23) / 977 = 0.5 exactly: 50.
    assert calculate_priority(int(511.5 * MIB), 1) == 50
    assert calculate_priority(int(511.5 * MIB) - 1, 1) == 49


def test_pod_images_are_normalised_as_the_runtime_names_them() -> None:
    # Upstream's TestNormalizedImageName cases.
    assert normalized_image_name("root") == "root:latest"
    assert normalized_image_name("gcr.io:5000/root") == "gcr.io:5000/root:latest"
    assert normalized_image_name("root:tag") == "root:tag"
    assert normalized_image_name(f"root@{DIGEST}") == f"root@{DIGEST}"
    held = {
        "gcr.io:5000/model:latest": 1000 * MIB,
        f"gcr.io:5000/model@{DIGEST}": 1000 * MIB,
        "gcr.io:5000/model:v1": 1000 * MIB,
    }
    nodes = [held, {}]
    # 1000/2 = 500 MiB -> 100 * 477 / 977 = 48.8 -> 48, whichever name the pod uses.
    assert scores(nodes, pod_with("gcr.io:5000/model")) == [48, 0]
    assert scores(nodes, pod_with(f"gcr.io:5000/model@{DIGEST}")) == [48, 0]
    assert scores(nodes, pod_with("gcr.io:5000/model:v1")) == [48, 0]
    # Another tag is another image; no registry prefix is added.
    assert scores(nodes, pod_with("gcr.io:5000/model:v2")) == [0, 0]
    assert scores(nodes, pod_with("model")) == [0, 0]


def test_multiple_containers_sum_their_images() -> None:
    # 300 on n1 only, 600 and 900 on n0 and n1, of three nodes; 3 containers: [23, 3000] MiB.
    # n0: 600 x 2/3 + 900 x 2/3 = 1000 -> 100 * 977 / 2977 = 32.8 -> 32.
    # n1: 300 / 3 + 400 + 600 = 1100 -> 100 * 1077 / 2977 = 36.2 -> 36.
    pod = pod_with("gcr.io/300", "gcr.io/600", "gcr.io/900")
    assert scores([N_600_40_900, N_300_600_900, {}], pod) == [32, 36, 0]
    # 30 on both nodes (full size), 40 on n0 only (half): n0 30 + 20 = 50 MiB
    # -> 100 * 27 / 1977 = 1.4 -> 1; n1: 30 -> 100 * 7 / 1977 -> 0.
    assert scores([N_20_30_40, N_4000_30], pod_with("gcr.io/30", "gcr.io/40")) == [1, 0]


def test_init_containers_count() -> None:
    # App gcr.io/30, init gcr.io/300 (2 containers): n0 holds 300 (of 2 nodes): 150 MiB
    # -> 100 * 127 / 1977 = 6.4 -> 6; n1 holds 30: 15 MiB -> 0.
    pod = pod_with("gcr.io/30", init=["gcr.io/300"])
    assert scores([N_40_300_2000, N_20_30_40], pod) == [6, 0]


def test_an_image_two_containers_use_counts_twice() -> None:
    # v1.31 sums per container: 2 x 500/2 = 500 MiB of [23, 2000] -> 100 * 477 / 1977 = 24.1.
    nodes = [{"x:1": 500 * MIB}, {}]
    assert scores(nodes, pod_with("x:1", "x:1")) == [24, 0]


def test_image_states_count_nodes_and_keep_the_first_size() -> None:
    states = make_image_states([{"a:1": 100, "b:1": 5}, {}, {"a:1": 120}])
    assert states is not None and states.num_nodes == 3
    a = states.get("a:1")
    assert a is not None and (a.size_bytes, a.num_nodes, a.nodes.tolist()) == (100, 2, [0, 2])
    assert states.get("c:1") is None
    assert make_image_states([{}, {}]) is None and make_image_states([]) is None


def test_without_node_images_every_node_scores_zero() -> None:
    # The twin: no node reports images, whatever the pod's are.
    il = plugin("ImageLocality")
    snap = make_cluster([8, 8, 8])
    assert snap.image_states is None and snap.node_images == ()
    cs, st = state(snap)
    pod = pod_with("gcr.io/300")
    assert il.score(cs, pod, st, np.arange(3)).tolist() == [0, 0, 0]
    assert il.score_node(cs, pod, st, 1) == 0


def test_the_node_holding_the_image_wins_a_tie() -> None:
    pod = pod_with("registry.example/app:1.0")
    empty = make_scheduler().decide(make_cluster([8, 8]), [pod])
    (chosen,) = [b.node for b in empty.bindings]
    other = 1 - int(chosen[1:])
    images: list[dict[str, int]] = [{}, {}]
    images[other] = {"registry.example/app:1.0": 800 * MIB}
    snap = make_cluster([8, 8], node_images=images)
    for reference in (False, True):
        decision = make_scheduler(reference=reference).decide(snap, [pod])
        assert [b.node for b in decision.bindings] == [f"n{other}"]


@settings(max_examples=60, deadline=None)
@given(
    hs.lists(
        hs.dictionaries(
            hs.sampled_from(["a:latest", "b:latest", "b:v1", "c:2", f"d@{DIGEST}"]),
            hs.integers(0, 3000).map(lambda m: m * MIB + 7),
            max_size=4,
        ),
        min_size=1,
        max_size=6,
    ),
    hs.lists(hs.sampled_from(["a", "b", "b:v1", "c:2", f"d@{DIGEST}", "e"]), min_size=1),
    hs.integers(0, 2),
)
def test_batched_scores_agree_with_the_reference(
    node_images: list[dict[str, int]], images: list[str], num_init: int
) -> None:
    pod = pod_with(*images, init=images[:num_init])
    scores(node_images, pod)  # asserts fast == reference
