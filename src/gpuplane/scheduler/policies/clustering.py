"""GpuClustering: keep GPU pods of the same kind together (fgd-openb.md §3).

Tags: a share pod, or a pod of k whole GPUs ("k-gpu"). score = 25 (8000 - gpuLeft_total) / 8000
(integer division) + 75 if the node holds only pods of the pod's tag, + 50 if it holds that tag
among others, + 25 if it holds no GPU pod, + 0 otherwise. CPU-only pods score 0 everywhere, so
they go to the first feasible node in the priority order.
"""

from __future__ import annotations

import numpy as np

from gpuplane.scheduler.policies.gpus import best_gpu_choice
from gpuplane.scheduler.policies.types import (
    MAX_SCORE,
    MAX_SPEC_GPU_MILLI,
    FloatArray,
    IntArray,
    NodeArrays,
    NodeScores,
    PodRequest,
)

QUARTER = MAX_SCORE // 4


def clustering_scores(nodes: NodeArrays, pod: PodRequest, idx: IntArray) -> NodeScores:
    """Scores of nodes ``idx`` for ``pod``; share pods take the tightest fitting GPU."""
    count = idx.shape[0]
    if pod.num_gpu == 0:
        return NodeScores(np.zeros(count, np.int64), np.full(count, -1, np.int64))
    left = nodes.gpu_left[idx].sum(axis=1)
    # Integer arithmetic in gpu_clustering_score.go's order: 100/4 * (8000 - left) / 8000.
    used_part = QUARTER * (MAX_SPEC_GPU_MILLI - left) // MAX_SPEC_GPU_MILLI
    tags = nodes.tag_counts[idx]
    num_tags = (tags > 0).sum(axis=1)
    has_own = tags[:, pod.tag] > 0
    bonus = np.where(
        has_own,
        np.where(num_tags == 1, 3 * QUARTER, 2 * QUARTER),
        np.where(num_tags == 0, QUARTER, 0),
    )
    gpu = best_gpu_choice(nodes.gpu_left[idx], pod)
    return NodeScores(score=(used_part + bonus).astype(np.int64), gpu=gpu)


class ClusteringPolicy:
    name = "clustering"
    node_local = True
    needs_frag = False

    def score(
        self, nodes: NodeArrays, pod: PodRequest, idx: IntArray, frag: FloatArray | None = None
    ) -> NodeScores:
        return clustering_scores(nodes, pod, idx)

    def normalize(self, raw: IntArray) -> IntArray:
        return raw
