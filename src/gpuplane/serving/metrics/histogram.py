"""A Prometheus histogram accumulator that also takes many observations at once.

Buckets are upper bounds (``le``) as in prometheus-client: an observation ``v`` counts in the
first bucket with ``v <= le`` (and in every later one when made cumulative), ``+Inf`` catches
the rest. ``observe_many`` counts a whole array of values with one weight each, which is how an
engine records the inter-token latencies of a decode run (every running request sees the same
step durations).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from functools import reduce
from operator import add
from typing import cast

import numpy as np
import numpy.typing as npt
from prometheus_client import utils as _prom_utils

SMALL_BATCH = 32
"""Up to this many values, ``observe_many`` counts them in Python (numpy's per-call cost
dominates); beyond, with numpy (whose sum is pairwise, so the two are not interchangeable)."""

# prometheus-client's rendering of ``le`` values (Go's float format: 0.001, 1.0, +Inf, 1e+06).
go_float = cast(Callable[[float], str], _prom_utils.floatToGoString)


class Histogram:
    """Bucket counts (non-cumulative, +Inf last), the sum and the count."""

    __slots__ = ("_bounds", "bounds", "count", "counts", "sum")

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = np.asarray(bounds, dtype=np.float64)
        self._bounds = [float(b) for b in bounds]
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0
        self.count = 0

    def observe(self, value: float, weight: int = 1) -> None:
        self.counts[bisect_left(self._bounds, value)] += weight
        self.sum += value * weight
        self.count += weight

    def observe_many(self, values: npt.NDArray[np.float64], weight: int = 1) -> None:
        if len(values) == 0 or weight == 0:
            return
        if len(values) <= SMALL_BATCH:  # numpy's per-call cost dominates small arrays
            self.observe_list(values.tolist(), weight)
            return
        idx = np.searchsorted(self.bounds, values, side="left")
        add = np.bincount(idx, minlength=len(self.counts)) * weight
        for i in np.flatnonzero(add).tolist():
            self.counts[i] += int(add[i])
        self.sum += float(values.sum()) * weight
        self.count += len(values) * weight

    def observe_list(self, values: list[float], weight: int = 1) -> None:
        """``observe_many`` for at most ``SMALL_BATCH`` values as a Python list (the same sums:
        the values added in order, then multiplied by the weight)."""
        if not values or weight == 0:
            return
        bounds, counts = self._bounds, self.counts
        total = reduce(add, values, 0.0)  # ((0.0 + v0) + v1) + ..., as a loop would add them
        first = bisect_left(bounds, min(values)) if total == total else -1  # (not NaN)
        if first >= 0 and first == bisect_left(bounds, max(values)):
            # Smallest and largest share a bucket, so every value is in it (the step gaps of
            # one decode run nearly always are).
            counts[first] += weight * len(values)
        else:
            for v in values:
                counts[bisect_left(bounds, v)] += weight
        self.sum += total * weight
        self.count += len(values) * weight

    def cumulative(self) -> list[tuple[float, int]]:
        """``(le, cumulative count)`` per bucket, ``+Inf`` last, as exposed in ``_bucket``."""
        les = [*self._bounds, float("inf")]
        out, running = [], 0
        for le, c in zip(les, self.counts, strict=True):
            running += c
            out.append((le, running))
        return out
