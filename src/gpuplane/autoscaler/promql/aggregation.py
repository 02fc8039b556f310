"""``sum``, ``avg``, ``min``, ``max`` and ``count`` with ``by``/``without`` grouping.

With ``by (labels)`` a result keeps only those labels; with ``without (labels)`` it keeps every
label except those and the metric name; with neither, one result without labels. ``min``/``max``
ignore NaN unless every value is NaN; ``count`` counts samples. ``sum`` and ``avg`` are
Prometheus 3's compensated sum and overflow-safe mean (``gofloat``): ``sum`` of values near
1e308 is +Inf, their ``avg`` stays finite. (``stddev``, ``stdvar``, ``quantile``, ``count_values``
and the other aggregations are outside the subset.)
"""

from __future__ import annotations

import math

from gpuplane.autoscaler.promql import gofloat
from gpuplane.autoscaler.promql.values import NAME, LabelSet, Sample, keep, without


def group_key(labels: LabelSet, grouping: tuple[str, ...], is_without: bool) -> LabelSet:
    if is_without:
        return without(labels, (*grouping, NAME))
    return keep(labels, grouping)


def aggregate(
    op: str, samples: tuple[Sample, ...], grouping: tuple[str, ...], is_without: bool
) -> list[Sample]:
    groups: dict[LabelSet, list[float]] = {}
    for s in samples:
        groups.setdefault(group_key(s.labels, grouping, is_without), []).append(s.value)
    return [Sample(key, _reduce(op, values)) for key, values in groups.items()]


def _reduce(op: str, values: list[float]) -> float:
    # A compensated sum can depend on the order in its last bit: values come in the order of the
    # input vector, which need not be the order Prometheus's storage returns series in.
    if op == "sum":
        return gofloat.kahan_sum(values)
    if op == "avg":
        return gofloat.mean(values)
    if op == "count":
        return float(len(values))
    result = values[0]
    for v in values[1:]:
        if math.isnan(result) or (v > result if op == "max" else v < result):
            result = v
    return result
