"""BestFit: prefer the node with the least CPU and GPU left after placement (fgd-openb.md §3).

raw = int(100 (1 - [0.5 (cpuLeft - cpuReq) / 128000 + 0.5 (gpuLeft_total - gpuReq) / 8000])),
then min-max normalised over the feasible nodes with integer arithmetic (plugin_utils.go
NormalizeScore): (raw - min) * 100 / (max - min), all 0 when max == min. The truncations
merge neighbouring raw values, which adds ties that the priority order then breaks.
"""

from __future__ import annotations

import numpy as np

from gpuplane.scheduler.policies.gpus import best_gpu_choice
from gpuplane.scheduler.policies.types import (
    MAX_SCORE,
    MAX_SPEC_CPU_MILLI,
    MAX_SPEC_GPU_MILLI,
    FloatArray,
    IntArray,
    NodeArrays,
    NodeScores,
    PodRequest,
)


def bestfit_raw_scores(nodes: NodeArrays, pod: PodRequest, idx: IntArray) -> NodeScores:
    """Raw (pre-normalisation) scores of nodes ``idx``; share pods take the tightest GPU."""
    cpu_after = (nodes.cpu_left[idx] - pod.cpu_milli).astype(np.float64)
    gpu_after = (nodes.gpu_left[idx].sum(axis=1) - pod.total_gpu_milli).astype(np.float64)
    # best_fit_score.go: score += (free - req) / maxSpec * weight, one resource after another.
    left = cpu_after / float(MAX_SPEC_CPU_MILLI) * 0.5
    left = left + gpu_after / float(MAX_SPEC_GPU_MILLI) * 0.5
    raw = ((1.0 - left) * float(MAX_SCORE)).astype(np.int64)
    return NodeScores(score=raw, gpu=best_gpu_choice(nodes.gpu_left[idx], pod))


def minmax_normalize(raw: IntArray) -> IntArray:
    """kube-style integer min-max normalisation to [0, 100] (plugin_utils.go NormalizeScore)."""
    lowest = int(raw.min())
    spread = int(raw.max()) - lowest
    if spread == 0:
        return np.zeros_like(raw)
    return (raw - lowest) * MAX_SCORE // spread


class BestFitPolicy:
    name = "bestfit"
    node_local = True
    needs_frag = False

    def score(
        self, nodes: NodeArrays, pod: PodRequest, idx: IntArray, frag: FloatArray | None = None
    ) -> NodeScores:
        return bestfit_raw_scores(nodes, pod, idx)

    def normalize(self, raw: IntArray) -> IntArray:
        return minmax_normalize(raw)
