"""Random: one feasible node uniformly at random (fgd-openb.md §3, ``-Random 1000 -gpusel
random``), so the node priority order plays no part.

The simulator's PreScore draws the node and gives it 100, the others 0; with a single feasible
node no draw is made. A share pod takes a uniformly random GPU with enough free milli. The
policy owns its generator (separate from the workload's), so it is the only stateful policy.
"""

from __future__ import annotations

import numpy as np

from gpuplane.scheduler.policies.types import (
    MAX_SCORE,
    FloatArray,
    IntArray,
    NodeArrays,
    NodeScores,
    PodRequest,
)


class RandomPolicy:
    name = "random"
    node_local = False
    needs_frag = False

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def score(
        self, nodes: NodeArrays, pod: PodRequest, idx: IntArray, frag: FloatArray | None = None
    ) -> NodeScores:
        count = idx.shape[0]
        score = np.zeros(count, dtype=np.int64)
        gpu = np.full(count, -1, dtype=np.int64)
        if count == 0:
            return NodeScores(score, gpu)
        pick = int(self.rng.integers(count)) if count > 1 else 0
        score[pick] = MAX_SCORE
        if pod.is_share:
            fitting = np.flatnonzero(nodes.gpu_left[idx[pick]] >= pod.gpu_milli)
            gpu[pick] = int(fitting[int(self.rng.integers(fitting.shape[0]))])
        return NodeScores(score, gpu)

    def normalize(self, raw: IntArray) -> IntArray:
        return raw
