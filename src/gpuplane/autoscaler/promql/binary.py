"""Binary operators between scalars and instant vectors (``promql/engine.go``: ``VectorBinop``,
``VectorscalarBinop``, ``VectorAnd/Or/Unless``).

- Arithmetic drops the metric name and never raises: Go's float rules apply (``x/0`` is ±Inf,
  ``0/0`` NaN, ``x%0`` NaN, ``^`` is ``math.Pow``: ``(-2)^1025`` is -Inf, ``0^-1`` +Inf,
  ``(-8)^(1/3)`` NaN; see ``gofloat``).
- A comparison without ``bool`` filters: an element stays, with its own value, when the
  comparison holds (for ``scalar > vector`` too: the vector element's value is kept). With
  ``bool`` every element stays with value 1 or 0 and loses its name.
- Two vectors are matched one-to-one on all labels but the name, or only on the ``on(...)``
  labels, or on all but the ``ignoring(...)`` ones; a result keeps the left side's labels (only
  the ``on`` labels, or without the ``ignoring`` ones). Several series with the same match key on
  one side is an error, as in Prometheus, since ``group_left``/``group_right`` are not supported.
- ``and``/``or``/``unless`` keep or drop left-hand series by whether the right side has a series
  with the same match key; ``or`` adds the right-hand series the left side lacks.
"""

from __future__ import annotations

from gpuplane.autoscaler.promql import gofloat
from gpuplane.autoscaler.promql.ast import COMPARISON_OPS, VectorMatching
from gpuplane.autoscaler.promql.values import (
    NAME,
    LabelSet,
    Sample,
    drop_name,
    keep,
    render,
    without,
)


class BinaryOpError(ValueError):
    """A binary operation Prometheus refuses at evaluation time (ambiguous matching)."""


def arith(op: str, a: float, b: float) -> float:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return gofloat.div(a, b)
    if op == "%":
        return gofloat.mod(a, b)
    return gofloat.pow_(a, b)


def compare(op: str, a: float, b: float) -> bool:
    return {
        "==": a == b,
        "!=": a != b,
        "<": a < b,
        "<=": a <= b,
        ">": a > b,
        ">=": a >= b,
    }[op]


def scalar_op(op: str, a: float, b: float, return_bool: bool) -> float:
    if op in COMPARISON_OPS:
        return 1.0 if compare(op, a, b) else 0.0
    return arith(op, a, b)


def vector_scalar(
    op: str, samples: tuple[Sample, ...], scalar: float, swap: bool, return_bool: bool
) -> list[Sample]:
    """``vector op scalar`` (or ``scalar op vector`` when ``swap``)."""
    out: list[Sample] = []
    for s in samples:
        lv, rv = (scalar, s.value) if swap else (s.value, scalar)
        if op in COMPARISON_OPS:
            holds = compare(op, lv, rv)
            if return_bool:
                out.append(Sample(drop_name(s.labels), 1.0 if holds else 0.0))
            elif holds:
                out.append(s)
        else:
            out.append(Sample(drop_name(s.labels), arith(op, lv, rv)))
    return out


def signature(labels: LabelSet, matching: VectorMatching | None) -> LabelSet:
    if matching is None:
        return drop_name(labels)
    if matching.on:
        return keep(labels, matching.labels)
    return without(labels, (*matching.labels, NAME))


def _result_labels(
    labels: LabelSet, op: str, matching: VectorMatching | None, return_bool: bool
) -> LabelSet:
    if op not in COMPARISON_OPS or return_bool:
        labels = drop_name(labels)
    if matching is not None:
        labels = keep(labels, matching.labels) if matching.on else without(labels, matching.labels)
    return labels


def vector_vector(
    op: str,
    lhs: tuple[Sample, ...],
    rhs: tuple[Sample, ...],
    matching: VectorMatching | None,
    return_bool: bool,
) -> list[Sample]:
    """One-to-one matching between two instant vectors."""
    right: dict[LabelSet, Sample] = {}
    for s in rhs:
        sig = signature(s.labels, matching)
        if sig in right:
            raise BinaryOpError(
                f"found duplicate series for the match group {render(sig)} on the right "
                f"hand-side of the operation: [{render(right[sig].labels)}, {render(s.labels)}]; "
                "many-to-many matching not allowed: matching labels must be unique on one side"
            )
        right[sig] = s
    out: list[Sample] = []
    seen: dict[LabelSet, LabelSet] = {}
    for s in lhs:
        sig = signature(s.labels, matching)
        match = right.get(sig)
        if match is None:
            continue
        if op in COMPARISON_OPS:
            holds = compare(op, s.value, match.value)
            if not holds and not return_bool:
                continue
            value = (1.0 if holds else 0.0) if return_bool else s.value
        else:
            value = arith(op, s.value, match.value)
        labels = _result_labels(s.labels, op, matching, return_bool)
        if sig in seen:
            raise BinaryOpError(
                "multiple matches for labels: many-to-one matching must be explicit "
                "(group_left/group_right)"
            )
        seen[sig] = labels
        out.append(Sample(labels, value))
    return out


def set_op(
    op: str, lhs: tuple[Sample, ...], rhs: tuple[Sample, ...], matching: VectorMatching | None
) -> list[Sample]:
    right = {signature(s.labels, matching) for s in rhs}
    if op == "and":
        return [s for s in lhs if signature(s.labels, matching) in right]
    if op == "unless":
        return [s for s in lhs if signature(s.labels, matching) not in right]
    left = {signature(s.labels, matching) for s in lhs}
    return list(lhs) + [s for s in rhs if signature(s.labels, matching) not in left]
