"""The paper's metrics and their discretisation (fgd-openb.md §4, merge_alloc_discrete.py).

Per event (one per arriving pod): arrived % = arrived GPU milli / total GPUs / 10, rounded to an
integer half to even; allocation % = allocated GPU milli / total GPUs / 10 rounded to 2
decimals with Python's ``round``. For each integer x in 0..130 the curve is the mean rounded
allocation % over the events whose rounded arrived % is x, or if there are none over those in
[x-1, x+1], rounded to 2 decimals; NaN if there are still none. Unallocated % = 100 - that.
"""

from __future__ import annotations

import math

import numpy as np

from gpuplane.scheduler.policies.types import FloatArray, IntArray

MAX_ARRIVED_PCT = 130
POINT_OF_INTEREST = 100


def arrived_pct(arrived_gpu_milli: IntArray, total_gpus: int) -> FloatArray:
    """Arrived % per event, rounded half to even (pandas ``x / total / 10`` then ``round``)."""
    return np.rint(arrived_gpu_milli / float(total_gpus) / 10.0)


def rounded_pct(gpu_milli: IntArray | FloatArray, total_gpus: int) -> FloatArray:
    """A GPU-milli amount as % of the cluster, rounded to 2 decimals with Python's ``round``
    (correctly rounded on the binary value, which ``np.round``'s scaling is not)."""
    ratio = gpu_milli / float(total_gpus) / 10.0
    return np.array([round(float(v), 2) for v in ratio], dtype=np.float64)


def discretize(arrived: FloatArray, value: FloatArray, max_x: int = MAX_ARRIVED_PCT) -> FloatArray:
    """Mean of ``value`` per integer arrived % 0..max_x, with the +-1 fallback; NaN if empty."""
    curve = np.full(max_x + 1, np.nan, dtype=np.float64)
    xs = arrived.astype(np.int64)
    order = np.argsort(xs, kind="stable")
    sorted_x, sorted_v = xs[order], value[order]
    for x in range(max_x + 1):
        lo, hi = np.searchsorted(sorted_x, [x, x + 1])
        if hi == lo:
            lo, hi = np.searchsorted(sorted_x, [x - 1, x + 2])
        if hi > lo:
            chunk = np.ascontiguousarray(sorted_v[lo:hi])
            curve[x] = round(float(chunk.sum() / chunk.shape[0]), 2)
    return curve


def allocation_curve(
    arrived_gpu_milli: IntArray, used_gpu_milli: IntArray, total_gpus: int
) -> FloatArray:
    """GPU allocation % at arrived % = 0..130."""
    return discretize(
        arrived_pct(arrived_gpu_milli, total_gpus), rounded_pct(used_gpu_milli, total_gpus)
    )


def unallocated_curve(
    arrived_gpu_milli: IntArray, used_gpu_milli: IntArray, total_gpus: int
) -> FloatArray:
    """Unallocated GPU % (the paper's y axis) at arrived % = 0..130, rounded to 2 decimals."""
    alloc = allocation_curve(arrived_gpu_milli, used_gpu_milli, total_gpus)
    return np.array([math.nan if math.isnan(a) else round(100.0 - a, 2) for a in alloc])


def frag_curve(
    arrived_gpu_milli: IntArray, frag_gpu_milli: FloatArray, total_gpus: int
) -> FloatArray:
    """Fragmentation amount (% of the cluster's GPUs) at arrived % = 0..130."""
    return discretize(
        arrived_pct(arrived_gpu_milli, total_gpus), rounded_pct(frag_gpu_milli, total_gpus)
    )


def value_at(curve: FloatArray, x: int = POINT_OF_INTEREST) -> float | None:
    """The curve at integer arrived % ``x`` (None when no event came near it)."""
    value = float(curve[x]) if 0 <= x < curve.shape[0] else math.nan
    return None if math.isnan(value) else value
