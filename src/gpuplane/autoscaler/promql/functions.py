"""The functions of the subset, computed as Prometheus computes them (``promql/functions.go``,
``promql/quantile.go``).

``rate``/``increase``/``delta`` use Prometheus's extrapolation: the change between the first and
last sample of the window (plus, for counters, every value lost at a reset, i.e. each sample
smaller than the one before adds that previous value) is scaled from the sampled interval to the
window. It is extrapolated all the way to a window boundary only when the first/last sample is
within 1.1 average sample intervals of it, otherwise by half an average interval; a counter is
never extrapolated below zero. Fewer than two samples give no result.

``histogram_quantile`` groups ``_bucket`` samples by their labels without ``le``, sorts buckets
by upper bound, requires a ``+Inf`` bucket, merges equal bounds, forces counts to be monotonic
(ignoring float noise below a relative 1e-12), then interpolates linearly inside the bucket that
holds the rank ``q · count``; the lowest bucket starts at 0 (or is its bound when that is <= 0),
and a rank in the ``+Inf`` bucket gives the highest finite bound. The edges, as in Prometheus:
``q`` NaN gives NaN, ``q < 0`` -Inf, ``q > 1`` +Inf; no ``+Inf`` bucket, fewer than two buckets
after merging, or a total count of 0 give NaN; an empty bucket holding the rank gives NaN (0/0).

``avg_over_time``/``sum_over_time`` use the compensated, overflow-safe mean and sum of
``gofloat``; nothing here raises on any float input.
"""

from __future__ import annotations

import math
import sys

from gpuplane.autoscaler.promql import gofloat
from gpuplane.autoscaler.promql.values import (
    NAME,
    LabelSet,
    RangeSeries,
    Sample,
    drop_name,
    get,
    without,
)

_SMALL_DELTA = 1e-12
_MIN_NORMAL = sys.float_info.min


def extrapolated_rate(
    series: RangeSeries, range_s: float, t_s: float, is_counter: bool, is_rate: bool
) -> float | None:
    """``extrapolatedRate`` for one float series; None when it has fewer than two samples."""
    times, values = series.times, series.values
    if len(values) < 2:
        return None
    range_start, range_end = t_s - range_s, t_s
    n_minus_one = len(values) - 1
    first_t, last_t = times[0], times[-1]
    result = values[-1] - values[0]
    if is_counter:
        prev = values[0]
        for v in values[1:]:
            if v < prev:
                result += prev  # a counter reset: the value before it was lost
            prev = v
    to_start = first_t - range_start
    to_end = range_end - last_t
    sampled = last_t - first_t
    average = sampled / n_minus_one
    threshold = average * 1.1
    if to_start >= threshold:
        to_start = average / 2
    if is_counter and result > 0 and values[0] >= 0:
        # A counter cannot go below zero: do not extrapolate past the point where it was 0.
        to_zero = sampled * (values[0] / result)
        if to_zero < to_start:
            to_start = to_zero
    if to_end >= threshold:
        to_end = average / 2
    factor = (sampled + to_start + to_end) / sampled
    if is_rate:
        factor /= range_s
    return result * factor


def instant_rate(series: RangeSeries, is_rate: bool) -> float | None:
    """``irate`` (``is_rate``) / ``idelta`` from the last two samples."""
    if len(series.values) < 2:
        return None
    (t0, t1), (v0, v1) = series.times[-2:], series.values[-2:]
    result = v1 - v0
    if is_rate and v1 < v0:
        result = v1  # counter reset between the two samples
    if not is_rate:
        return result
    interval = t1 - t0
    return None if interval == 0 else result / interval


def over_time(func: str, series: RangeSeries) -> float | None:
    values = series.values
    if not values:
        return None
    if func == "avg_over_time":
        return gofloat.mean(values)
    if func == "sum_over_time":
        return gofloat.kahan_sum(values)
    if func == "count_over_time":
        return float(len(values))
    if func == "last_over_time":
        return values[-1]
    is_max = func == "max_over_time"
    result = values[0]
    for v in values[1:]:  # compareOverTime: a NaN so far is replaced, ties keep the first
        if math.isnan(result) or (v > result if is_max else v < result):
            result = v
    return result


def _almost_equal(a: float, b: float, epsilon: float) -> bool:
    if math.isnan(a) and math.isnan(b):
        return True
    if a == b:
        return True
    abs_sum = abs(a) + abs(b)
    diff = abs(a - b)
    if a == 0 or b == 0 or abs_sum < _MIN_NORMAL:
        return diff < epsilon * _MIN_NORMAL
    return diff / min(abs_sum, sys.float_info.max) < epsilon


def bucket_quantile(q: float, buckets: list[tuple[float, float]]) -> float:
    """``bucketQuantile`` over (upper bound, cumulative count) pairs of one histogram."""
    if math.isnan(q):
        return math.nan
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    ordered = sorted(buckets, key=lambda b: b[0])
    if not ordered or not (math.isinf(ordered[-1][0]) and ordered[-1][0] > 0):
        return math.nan
    merged: list[list[float]] = []
    for bound, count in ordered:  # coalesceBuckets: equal bounds add up
        if merged and merged[-1][0] == bound:
            merged[-1][1] += count
        else:
            merged.append([bound, count])
    prev = merged[0][1]
    for bucket in merged[1:]:  # ensureMonotonicAndIgnoreSmallDeltas
        curr = bucket[1]
        if curr == prev:
            continue
        if _almost_equal(prev, curr, _SMALL_DELTA) or curr < prev:
            bucket[1] = prev
            continue
        prev = curr
    if len(merged) < 2:
        return math.nan
    observations = merged[-1][1]
    if observations == 0:
        return math.nan
    rank = q * observations
    b = gofloat.search(len(merged) - 1, lambda i: merged[i][1] >= rank)
    if b == len(merged) - 1:
        return merged[-2][0]
    if b == 0 and merged[0][0] <= 0:
        return merged[0][0]
    start, end, count = 0.0, merged[b][0], merged[b][1]
    if b > 0:
        start = merged[b - 1][0]
        count -= merged[b - 1][1]
        rank -= merged[b - 1][1]
    # count is 0 when the rank is 0 and the lowest bucket is empty (histogram_quantile(0, ...)):
    # Go's 0/0 is NaN, and so is the result.
    return start + (end - start) * gofloat.div(rank, count)


def parse_le(text: str) -> float | None:
    """An ``le`` label as ``strconv.ParseFloat`` reads it (``+Inf``, ``1e3``, ``0.5``)."""
    if text != text.strip() or "_" in text:  # Go accepts neither spaces nor digit separators
        return None
    try:
        return float(text)
    except ValueError:
        return None


def histogram_quantile(q: float, samples: tuple[Sample, ...]) -> list[Sample]:
    """``histogram_quantile`` over classic ``_bucket`` samples (series with a bad ``le`` are
    skipped, as Prometheus skips them with a warning)."""
    groups: dict[LabelSet, list[tuple[float, float]]] = {}
    for s in samples:
        bound = parse_le(get(s.labels, "le"))
        if bound is None:
            continue
        key = without(s.labels, ("le", NAME))
        groups.setdefault(key, []).append((bound, s.value))
    return [Sample(key, bucket_quantile(q, buckets)) for key, buckets in groups.items()]


def simple(func: str, samples: tuple[Sample, ...], arg: float | None) -> list[Sample]:
    """Element-wise functions; they drop the metric name like Prometheus."""
    out: list[Sample] = []
    for s in samples:
        v = s.value
        if func == "abs":
            r = abs(v)
        elif func in ("ceil", "floor"):
            r = gofloat.ceil(v) if func == "ceil" else gofloat.floor(v)
        elif func == "clamp_min":  # clamp(v, min, +Inf): math.Max(min, math.Min(+Inf, v))
            assert arg is not None
            r = gofloat.go_max(arg, gofloat.go_min(math.inf, v))
        else:  # clamp_max: clamp(v, -Inf, max)
            assert arg is not None
            r = gofloat.go_max(-math.inf, gofloat.go_min(arg, v))
        out.append(Sample(drop_name(s.labels), r))
    return out
