"""The best points: constraints met, ranked by the objectives; Pareto fronts of two figures."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from gpuplane.sweep.engine.point import Cell
from gpuplane.sweep.engine.spec import Bounds

Record = Mapping[str, object]


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(value) else float(value)


def meets(record: Record, constraints: Mapping[str, Bounds]) -> bool:
    """Every constrained figure is a number within its bounds (a missing figure fails)."""
    for figure, bounds in constraints.items():
        value = _number(record.get(figure))
        if value is None:
            return False
        if bounds.min is not None and value < bounds.min:
            return False
        if bounds.max is not None and value > bounds.max:
            return False
    return True


def _key(record: Record, objectives: Mapping[str, str]) -> tuple[float, ...]:
    """Smaller is better, objective by objective; a missing figure ranks last."""
    out: list[float] = []
    for figure, direction in objectives.items():
        value = _number(record.get(figure))
        if value is None:
            out.append(math.inf)
        else:
            out.append(value if direction == "min" else -value)
    return tuple(out)


def best(
    records: Sequence[Record],
    objectives: Mapping[str, str],
    constraints: Mapping[str, Bounds],
    count: int,
) -> list[Record]:
    """Up to ``count`` records meeting the constraints, best first: by the first objective, ties
    by the next, then by point order."""
    ok = [r for r in records if meets(r, constraints)]
    ranked = sorted(enumerate(ok), key=lambda item: (_key(item[1], objectives), item[0]))
    return [r for _, r in ranked[:count]]


def pareto_front(
    records: Sequence[Record], x: str, y: str, directions: Mapping[str, str]
) -> list[Record]:
    """The records no other record dominates on (x, y) (as good on both, better on one), sorted
    by x; records missing either figure take no part."""
    signs = {f: (1.0 if directions[f] == "min" else -1.0) for f in (x, y)}
    scored: list[tuple[float, float, Record]] = []
    for r in records:
        vx, vy = _number(r.get(x)), _number(r.get(y))
        if vx is not None and vy is not None:
            scored.append((vx * signs[x], vy * signs[y], r))
    scored.sort(key=lambda t: (t[0], t[1]))
    front: list[Record] = []
    best_y = math.inf
    for _, sy, r in scored:
        if sy < best_y:
            front.append(r)
            best_y = sy
    return front


def cell(record: Record, column: str) -> Cell:
    value = record.get(column)
    return value if isinstance(value, bool | int | float | str) else None
