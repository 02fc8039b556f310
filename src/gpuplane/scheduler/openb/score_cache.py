"""Per-pod-spec cache of node scores (fgd-openb.md §6 step 3, "what worked").

A node-local policy's score of a node depends only on that node's state and the pod's
(cpu, num_gpu, gpu_milli), so scores are kept per such key and recomputed only for the nodes
that changed since the key was last scored. Memory and model constraints only filter, so they
are not part of the key.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpuplane.scheduler.policies.types import IntArray, NodeScores

ScoreKey = tuple[int, int, int]


class ScoreCache:
    def __init__(self, num_nodes: int) -> None:
        self.num_nodes = num_nodes
        self._entries: dict[ScoreKey, tuple[IntArray, IntArray, IntArray]] = {}
        self.rescored = 0

    def scores(
        self,
        key: ScoreKey,
        idx: IntArray,
        changed_at: IntArray,
        clock: int,
        compute: Callable[[IntArray], NodeScores],
    ) -> tuple[IntArray, IntArray]:
        """Scores and GPU choices of nodes ``idx``, computing only the stale ones."""
        entry = self._entries.get(key)
        if entry is None:
            n = self.num_nodes
            entry = (
                np.zeros(n, np.int64),
                np.full(n, -1, np.int64),
                np.full(n, -1, np.int64),
            )
            self._entries[key] = entry
        score, gpu, scored_at = entry
        stale = idx[scored_at[idx] < changed_at[idx]]
        if stale.shape[0]:
            fresh = compute(stale)
            score[stale] = fresh.score
            gpu[stale] = fresh.gpu
            scored_at[stale] = clock
            self.rescored += int(stale.shape[0])
        return score[idx], gpu[idx]
