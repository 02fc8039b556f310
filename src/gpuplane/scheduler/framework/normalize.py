"""NormalizeScore helpers (kube-scheduler: framework/plugins/helper/normalize_score.go
DefaultNormalizeScore): scale to [0, 100] by the highest score among the feasible nodes, and
optionally reverse (100 - score). All zero: zero, or 100 everywhere when reversed.
"""

from __future__ import annotations

import numpy as np

from gpuplane.scheduler.framework.interfaces import MAX_NODE_SCORE
from gpuplane.scheduler.framework.types import IntArray


def default_normalize(scores: IntArray, reverse: bool) -> IntArray:
    top = int(scores.max()) if scores.size else 0
    if top == 0:
        fill = MAX_NODE_SCORE if reverse else 0
        return np.full(scores.size, fill, dtype=np.int64)
    scaled = MAX_NODE_SCORE * scores // top
    return (MAX_NODE_SCORE - scaled) if reverse else scaled


def default_normalize_reference(scores: list[int], reverse: bool) -> list[int]:
    top = max(scores, default=0)
    if top == 0:
        return [MAX_NODE_SCORE if reverse else 0 for _ in scores]
    out = []
    for s in scores:
        v = MAX_NODE_SCORE * s // top
        out.append(MAX_NODE_SCORE - v if reverse else v)
    return out
