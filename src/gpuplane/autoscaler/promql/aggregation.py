"""``sum``, ``avg``, ``min``, ``max`` and ``count`` with ``by``/``without`` grouping.

With ``by (labels)`` a result keeps only those labels; with ``without (labels)`` it keeps every
label except those and the metric name; with neither, one result without labels. ``min``/``max``
ignore NaN unless every value is NaN; ``count`` counts samples.
"""

from __future__ import annotations

import math

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
    if op == "sum":
        return math.fsum(values) if all(math.isfinite(v) for v in values) else sum(values)
    if op == "avg":
        if all(math.isfinite(v) for v in values):
            return math.fsum(values) / len(values)
        return sum(values) / len(values)
    if op == "count":
        return float(len(values))
    result = values[0]
    for v in values[1:]:
        if math.isnan(result) or (v > result if op == "max" else v < result):
            result = v
    return result
