from __future__ import annotations

import numpy as np
import pytest

from gpuplane.core.errors import InputError
from gpuplane.scheduler.policies import PolicyContext, make_policy
from gpuplane.scheduler.policies.bestfit import bestfit_raw_scores, minmax_normalize
from gpuplane.scheduler.policies.clustering import clustering_scores
from gpuplane.scheduler.policies.dotprod import dotprod_scores
from gpuplane.scheduler.policies.gpus import feasible, select_position, tightest_gpu
from gpuplane.scheduler.policies.packing import packing_scores
from gpuplane.scheduler.policies.random import RandomPolicy
from tests.unit.scheduler.openb_factories import all_nodes, make_nodes, make_pod


def test_feasibility_cpu_memory_model_and_gpus() -> None:
    nodes = make_nodes(
        [[1000, 300], [300, 300], [1000, 1000], [1000]],
        cpu=[8000, 8000, 1000, 8000],
        mem=[100, 100, 100, 10],
        model=[0, 0, 0, 1],
    )
    assert feasible(nodes, make_pod(cpu=2000, gpus=1, milli=500, mem=50)).tolist() == [
        True, False, False, False,
    ]  # fmt: skip
    assert feasible(nodes, make_pod(cpu=500, gpus=2, milli=1000, mem=50)).tolist() == [
        False, False, True, False,
    ]  # fmt: skip
    only_model_1 = make_pod(cpu=500, gpus=1, milli=1000, mem=5, models=frozenset({1}))
    assert feasible(nodes, only_model_1).tolist() == [False, False, False, True]
    # CPU-only pods ignore the model constraint and GPUs.
    assert feasible(nodes, make_pod(cpu=500, mem=50)).tolist() == [True, True, True, False]


def test_tightest_gpu_first_index_on_ties() -> None:
    gpu_left = np.array([[1000, 400, 300, 300], [100, 100, 100, 100]])
    assert tightest_gpu(gpu_left, 250).tolist() == [2, -1]


def test_ties_go_to_the_highest_priority_node() -> None:
    idx = np.array([3, 5, 7])
    rank = np.array([9, 9, 9, 4, 9, 1, 9, 0])  # node 7 first, then 5, then 3
    assert select_position(np.array([12, 12, 10]), idx, rank) == 1
    assert select_position(np.array([12, 12, 12]), idx, rank) == 2
    assert select_position(np.array([13, 12, 12]), idx, rank) == 0


def test_dotprod_truncates_and_prefers_the_tightest_node() -> None:
    nodes = make_nodes([[1000] * 8, [1000, 0]], cpu=[128_000, 16_000])
    got = dotprod_scores(nodes, make_pod(cpu=32_000, gpus=1, milli=1000), all_nodes(2))
    # node 0: dot = 1 * .25 + 1 * .125 = .375 -> int(100 * .8125) = 81
    # node 1: dot = .125 * .25 + .125 * .125 = .046875 -> int(97.65625) = 97
    assert got.score.tolist() == [81, 97]
    assert got.gpu.tolist() == [-1, -1]


def test_bestfit_raw_and_integer_minmax() -> None:
    nodes = make_nodes([[1000] * 8, [1000, 500], [1000] * 4], cpu=[128_000, 16_000, 64_000])
    raw = bestfit_raw_scores(nodes, make_pod(cpu=16_000, gpus=1, milli=500), all_nodes(3))
    # node 0: .5 * 112/128 + .5 * 7500/8000 = .90625 -> 9; node 1: 0 + .5 * 1000 / 8000 -> 93
    # node 2: .5 * 48/128 + .5 * 3500/8000 = .40625 -> 59
    assert raw.score.tolist() == [9, 93, 59]
    assert raw.gpu.tolist() == [0, 1, 0]
    assert minmax_normalize(raw.score).tolist() == [0, 100, (59 - 9) * 100 // 84]
    assert minmax_normalize(np.array([7, 7])).tolist() == [0, 0]


def test_clustering_tags() -> None:
    # tags: [share, 1-gpu, ...]; node 0 only share pods, node 1 share and 1-gpu, node 2 idle,
    # node 3 only 1-gpu pods.
    nodes = make_nodes([[1000] * 8] * 4, tags=[[2], [1, 1], [], [0, 3]], slots=8)
    share = clustering_scores(nodes, make_pod(gpus=1, milli=300), all_nodes(4))
    assert share.score.tolist() == [75, 50, 25, 0]
    nodes.gpu_left[0, :4] = 0  # 4000 used -> 25 * 4000 / 8000 = 12
    assert clustering_scores(nodes, make_pod(gpus=1, milli=300), all_nodes(4)).score[0] == 87
    assert clustering_scores(nodes, make_pod(), all_nodes(4)).score.tolist() == [0, 0, 0, 0]


def test_packing_cases() -> None:
    nodes = make_nodes([[1000, 1000], [1000, 400, 250], [1000, 1000, 0]])
    share = packing_scores(nodes, make_pod(gpus=1, milli=200), all_nodes(3))
    # idle node: max(33 - 2, 2) = 31; used node, tightest 250 -> 100 - 25 // 10 = 98;
    # used node whose only fitting GPUs are free: max(50 - 1, 33) = 49
    assert share.score.tolist() == [31, 98, 49]
    assert share.gpu.tolist() == [0, 2, 0]
    whole = packing_scores(nodes, make_pod(gpus=2, milli=1000), all_nodes(3))
    assert whole.score.tolist() == [31, 48, 48]
    assert packing_scores(nodes, make_pod(), all_nodes(3)).score.tolist() == [0, 0, 0]


def test_random_uses_its_own_generator() -> None:
    nodes = make_nodes([[1000, 500, 600]] * 5)
    pod = make_pod(gpus=1, milli=500)
    picks = []
    for _ in range(2):
        policy = RandomPolicy(np.random.default_rng(3))
        picks.append([policy.score(nodes, pod, all_nodes(5)) for _ in range(20)])
    for a, b in zip(*picks, strict=True):
        assert a.score.tolist() == b.score.tolist() and a.gpu.tolist() == b.gpu.tolist()
    winners = {int(np.argmax(s.score)) for s in picks[0]}
    gpus = {int(s.gpu[np.argmax(s.score)]) for s in picks[0]}
    assert len(winners) > 1 and gpus == {0, 1, 2}
    single = RandomPolicy(np.random.default_rng(3)).score(nodes, make_pod(), np.array([4]))
    assert single.score.tolist() == [100]


def test_unknown_policy_lists_the_valid_names() -> None:
    with pytest.raises(InputError, match="expected one of random, dotprod"):
        make_policy("tetris", PolicyContext())
