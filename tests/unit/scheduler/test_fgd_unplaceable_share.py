"""A node that passes the node-level filter but where no single GPU can take a share pod.

The crash of ``bench/scheduler_throughput.py``'s Fragmentation run (issue 26): NodeResourcesFit
counts ``gpuplane.io/gpu-milli`` over a node, so a 500-milli pod passes on a node whose GPUs have
300 free each (900 in all); FGD finds no placement there, ``best_per_row`` returned one score
fewer than the nodes it was given, and the cycle indexed past its end. Such a node now scores 0
with no GPU.
"""

from __future__ import annotations

import numpy as np

from gpuplane.scheduler.policies.fgd import best_per_row, fgd_scores
from gpuplane.scheduler.policies.gpuplane import gpuplane_scores
from tests.unit.scheduler.openb_factories import all_nodes, make_nodes, make_pod, make_typical


def test_a_row_without_candidates_scores_zero_with_no_gpu() -> None:
    row = np.array([0, 0, 2], dtype=np.int64)
    gpu = np.array([1, 3, 0], dtype=np.int64)
    score = np.array([40, 70, 55], dtype=np.int64)
    best, best_gpu = best_per_row(row, gpu, score, 4)
    assert best.tolist() == [70, 0, 55, 0]
    assert best_gpu.tolist() == [3, -1, 0, -1]


def test_no_candidates_at_all() -> None:
    empty = np.zeros(0, dtype=np.int64)
    best, best_gpu = best_per_row(empty, empty, empty, 2)
    assert best.tolist() == [0, 0]
    assert best_gpu.tolist() == [-1, -1]


def test_fgd_and_gpuplane_score_every_node_they_are_given() -> None:
    typical = make_typical([(1000, 500, 1), (1000, 1000, 1)], [0.5, 0.5])
    # Node 1 has 900 milli free in all, but no GPU with 500 (the bench's node 24 had the same).
    nodes = make_nodes([[1000, 0], [300, 300, 300, 0], [600]])
    pod = make_pod(gpus=1, milli=500)
    for scores in (
        fgd_scores(nodes, pod, all_nodes(3), typical),
        gpuplane_scores(nodes, pod, all_nodes(3), typical),
    ):
        assert scores.score.shape == (3,)
        assert scores.score[1] == 0 and scores.gpu[1] == -1
        assert scores.gpu[0] == 0 and scores.gpu[2] == 0
