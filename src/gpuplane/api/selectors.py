"""Label selectors as values, and how they match (apimachinery ``pkg/labels/selector.go``).

A selector is a list of requirements that must all hold. Operators are the internal ones
``labels.Parse`` produces from the string form (``=``, ``!=``, ``in``, ``notin``, ``exists``,
``!exists``, ``gt``, ``lt``); meta/v1's ``matchLabels``/``matchExpressions`` map onto them as
``LabelSelectorAsSelector`` does (a matchLabels entry is ``=`` with one value; ``In``, ``NotIn``,
``Exists``, ``DoesNotExist``). As there, ``!=`` and ``notin`` also match objects without the key,
and the empty selector matches everything. The nil selector (a field left out) matches nothing:
callers that keep the difference hold ``LabelSelector | None``, None being nil, as
``LabelSelectorAsSelector(nil)`` returns ``labels.Nothing()``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

Operator = Literal["exists", "!exists", "=", "!=", "in", "notin", "gt", "lt"]

# meta/v1 LabelSelectorOperator -> the selector's operator. Validation refuses any other
# operator before matching; DoesNotExist is the remaining one.
_FROM_META: dict[str, Operator] = {"In": "in", "NotIn": "notin", "Exists": "exists"}


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    op: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key, "")
        if self.op == "exists":
            return present
        if self.op == "!exists":
            return not present
        if self.op in ("=", "in"):
            return present and value in self.values
        if self.op in ("!=", "notin"):
            return not present or value not in self.values
        # gt/lt: apimachinery compares integers and treats a non-integer label as no match.
        if not present or not re.fullmatch(r"[+-]?\d+", value):
            return False
        bound = int(self.values[0])
        return int(value) > bound if self.op == "gt" else int(value) < bound


@dataclass(frozen=True, slots=True)
class LabelSelector:
    text: str
    requirements: tuple[Requirement, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)


def from_match_fields(
    match_labels: Mapping[str, str] | None,
    match_expressions: Iterable[tuple[str, str, Iterable[str] | None]] | None,
) -> LabelSelector:
    """meta/v1 ``matchLabels`` and ``(key, operator, values)`` of ``matchExpressions`` as one
    selector (``text`` is empty: it was not written in the string form)."""
    reqs = [Requirement(k, "=", (v,)) for k, v in (match_labels or {}).items()]
    for key, operator, values in match_expressions or ():
        op = _FROM_META.get(operator, "!exists")
        reqs.append(Requirement(key, op, tuple(sorted(set(values or ())))))
    return LabelSelector("", tuple(reqs))


def from_meta(raw: object) -> LabelSelector | None:
    """A meta/v1 LabelSelector written as a mapping, as it sits in a pod's raw ``spec.affinity``:
    None when it is absent (nil: matches nothing); ``{}`` is the empty selector (everything).
    Validation happened where the manifest was read; entries of the wrong shape are skipped."""
    if not isinstance(raw, Mapping):
        return None
    match_labels = raw.get("matchLabels")
    labels = (
        {str(k): str(v) for k, v in match_labels.items()}
        if isinstance(match_labels, Mapping)
        else {}
    )
    exprs: list[tuple[str, str, Iterable[str] | None]] = []
    raw_exprs = raw.get("matchExpressions")
    for e in raw_exprs if isinstance(raw_exprs, list) else []:
        if isinstance(e, Mapping):
            values = e.get("values")
            listed = [str(v) for v in values] if isinstance(values, list) else None
            exprs.append((str(e.get("key", "")), str(e.get("operator", "")), listed))
    return from_match_fields(labels, exprs)


def with_match_labels(labels: Mapping[str, str], selector: LabelSelector) -> LabelSelector:
    """``labels.SelectorFromSet(labels)`` with ``selector``'s requirements added."""
    reqs = tuple(Requirement(k, "=", (v,)) for k, v in labels.items())
    return LabelSelector("", reqs + selector.requirements)
