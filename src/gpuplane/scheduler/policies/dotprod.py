"""DotProd ("Tetris"): prefer the node whose free vector has the smallest dot product with the
pod's request (fgd-openb.md §3: ``-DotProd 1000 -gpusel best -dimext merge -norm max``).

Node vector [cpuLeft / 128000, gpuLeft_total / 8000], pod vector [cpuReq / 128000,
totalGpuReq / 8000]; score = int(100 (1 - dot / 2)). Floats follow dot_product_score.go:
components are divided (not multiplied by a reciprocal), the dot product is summed in
component order, and the score is truncated toward zero.
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


def dotprod_scores(nodes: NodeArrays, pod: PodRequest, idx: IntArray) -> NodeScores:
    """Scores of nodes ``idx`` for ``pod``; share pods take the tightest fitting GPU."""
    node_cpu = nodes.cpu_left[idx] / float(MAX_SPEC_CPU_MILLI)
    node_gpu = nodes.gpu_left[idx].sum(axis=1) / float(MAX_SPEC_GPU_MILLI)
    pod_cpu = pod.cpu_milli / float(MAX_SPEC_CPU_MILLI)
    pod_gpu = pod.total_gpu_milli / float(MAX_SPEC_GPU_MILLI)
    dot = node_cpu * pod_cpu + node_gpu * pod_gpu
    score = (float(MAX_SCORE) * (1.0 - dot / 2.0)).astype(np.int64)
    return NodeScores(score=score, gpu=best_gpu_choice(nodes.gpu_left[idx], pod))


class DotProdPolicy:
    name = "dotprod"
    node_local = True
    needs_frag = False

    def score(
        self, nodes: NodeArrays, pod: PodRequest, idx: IntArray, frag: FloatArray | None = None
    ) -> NodeScores:
        return dotprod_scores(nodes, pod, idx)

    def normalize(self, raw: IntArray) -> IntArray:
        return raw
