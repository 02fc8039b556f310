"""Node taints, pod tolerations and the rule that matches them (k8s.io/api core/v1).

``Toleration.tolerates`` is core/v1 toleration.go ``ToleratesTaint``: an empty effect matches
every effect; an empty key with ``Exists`` matches every taint; ``Exists`` ignores the value;
``Equal`` (the default) compares values, and an empty key is only valid with ``Exists``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
TolerationOperator = Literal["Equal", "Exists"]


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: TaintEffect = "NoSchedule"


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str | None = None
    operator: TolerationOperator = "Equal"
    value: str | None = None
    effect: TaintEffect | None = None
    toleration_seconds: float | None = None

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if not self.key:
            return False  # an empty key is only valid with Exists
        return (self.value or "") == taint.value


def tolerated(taint: Taint, tolerations: Sequence[Toleration]) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


def first_untolerated(
    taints: Sequence[Taint], tolerations: Sequence[Toleration], effects: frozenset[str]
) -> Taint | None:
    """The first taint with one of ``effects`` that no toleration tolerates."""
    for taint in taints:
        if taint.effect in effects and not tolerated(taint, tolerations):
            return taint
    return None
