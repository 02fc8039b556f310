"""GpuPacking: shared GPUs first, then free GPUs on used nodes, then idle nodes (fgd-openb.md §3).

Integer rules of gpu_packing_score.go: a node with all GPUs free scores max(33 - nFree, nFree);
otherwise the pod's GPUs are chosen tightest first, and if any of them is fully free the score
is max(50 - nFullyFreeUsed, 33), else max(100 - sum(freePercent of used GPUs) / 10, 50).
CPU-only pods score 0 everywhere (first feasible node in the priority order).
"""

from __future__ import annotations

import numpy as np

from gpuplane.scheduler.policies.gpus import tightest_gpu
from gpuplane.scheduler.policies.types import (
    MAX_SCORE,
    MILLI_PER_GPU,
    FloatArray,
    IntArray,
    NodeArrays,
    NodeScores,
    PodRequest,
)

_THIRD = MAX_SCORE // 3
_HALF = MAX_SCORE // 2


def packing_scores(nodes: NodeArrays, pod: PodRequest, idx: IntArray) -> NodeScores:
    """Scores of nodes ``idx`` for ``pod``; share pods take the tightest fitting GPU."""
    count = idx.shape[0]
    no_gpu = np.full(count, -1, dtype=np.int64)
    if pod.gpu_milli <= 0:
        return NodeScores(np.zeros(count, np.int64), no_gpu)
    gpu_left = nodes.gpu_left[idx]
    num_free = (gpu_left == MILLI_PER_GPU).sum(axis=1)
    idle_node = np.maximum(_THIRD - num_free, num_free)
    if not pod.is_share:
        # Whole GPUs fit only on fully free GPUs, so a used node is always the middle case.
        used_node = np.full(count, max(_HALF - pod.num_gpu, _THIRD), dtype=np.int64)
        score = np.where(num_free == nodes.num_gpus[idx], idle_node, used_node)
        return NodeScores(score.astype(np.int64), no_gpu)
    gpu = tightest_gpu(gpu_left, pod.gpu_milli)
    chosen_left = gpu_left[np.arange(count), gpu]
    shared = np.maximum(MAX_SCORE - (chosen_left * 100 // MILLI_PER_GPU) // 10, _HALF)
    used_node = np.where(chosen_left == MILLI_PER_GPU, max(_HALF - 1, _THIRD), shared)
    score = np.where(num_free == nodes.num_gpus[idx], idle_node, used_node)
    return NodeScores(score.astype(np.int64), gpu)


class PackingPolicy:
    name = "packing"
    node_local = True
    needs_frag = False

    def score(
        self, nodes: NodeArrays, pod: PodRequest, idx: IntArray, frag: FloatArray | None = None
    ) -> NodeScores:
        return packing_scores(nodes, pod, idx)

    def normalize(self, raw: IntArray) -> IntArray:
        return raw
