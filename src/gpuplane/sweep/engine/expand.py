"""Points from parameters: every combination (grid) or seeded random samples."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping

import numpy as np

from gpuplane.core.errors import InputError, Location
from gpuplane.sweep.engine.point import Point, Value
from gpuplane.sweep.engine.spec import ParameterSpec, SearchSpec

# A grid beyond this is a mistake (a million runs of even a second is eleven days on 2 cores).
MAX_POINTS = 1_000_000


def _int_range(text: str, field: str) -> list[Value]:
    """``42-51`` (inclusive) or ``42,45,50-52``."""
    out: list[Value] = []
    for part in text.split(","):
        low, dash, high = part.strip().partition("-")
        try:
            first, last = int(low), int(high if dash else low)
        except ValueError:
            first, last = 0, -1
        if last < first:
            raise InputError(
                f"{part.strip()!r} is not a whole number or range",
                expected="a list of values, or whole numbers and ranges like '42-51'",
                location=Location(field=field),
            )
        out.extend(range(first, last + 1))
    return out


def _range_values(start: float, stop: float, step: float) -> list[Value]:
    if all(isinstance(x, int) for x in (start, stop, step)):
        return list(range(int(start), int(stop) + 1, int(step)))
    count = math.floor((stop - start) / step + 1e-9) + 1
    # start + i * step, not repeated addition: 0.1 steps then read 0.3, not 0.30000000000000004.
    return [round(start + i * step, 12) for i in range(count)]


def discrete_values(name: str, spec: ParameterSpec) -> list[Value] | None:
    """The parameter's listed values, or None for a continuous domain (uniform, log_uniform,
    integers), which only random search draws from."""
    field = f"parameters.{name}"
    if isinstance(spec.values, str):
        return _int_range(spec.values, f"{field}.values")
    if spec.values is not None:
        return list(spec.values)
    if spec.range is not None:
        r = spec.range
        return _range_values(r.start, r.stop, r.step)
    return None


def _grid(parameters: Mapping[str, ParameterSpec]) -> list[tuple[tuple[str, Value], ...]]:
    axes: list[list[tuple[str, Value]]] = []
    total = 1
    for name, spec in parameters.items():
        values = discrete_values(name, spec)
        if values is None:
            raise InputError(
                "a continuous domain has no grid",
                expected="values or range for a grid search, or search: {random: {samples: N}}",
                location=Location(field=f"parameters.{name}"),
            )
        axes.append([(name, v) for v in values])
        total *= len(values)
    if total > MAX_POINTS:
        raise InputError(
            f"the grid has {total:,} points",
            expected=f"at most {MAX_POINTS:,}; fewer values, or random search",
            location=Location(field="parameters"),
        )
    return list(itertools.product(*axes))


def _draw(rng: np.random.Generator, name: str, spec: ParameterSpec) -> Value:
    values = discrete_values(name, spec)
    if values is not None:
        return values[int(rng.integers(len(values)))]
    if spec.uniform is not None:
        return float(rng.uniform(*spec.uniform))
    if spec.log_uniform is not None:
        low, high = spec.log_uniform
        return float(math.exp(rng.uniform(math.log(low), math.log(high))))
    assert spec.integers is not None
    return int(rng.integers(spec.integers[0], spec.integers[1] + 1))


def _random(
    parameters: Mapping[str, ParameterSpec], samples: int, seed: int
) -> list[tuple[tuple[str, Value], ...]]:
    """``samples`` draws, each parameter independently, in file order; a draw equal to an
    earlier one is kept once (so a small discrete space gives fewer points than samples)."""
    rng = np.random.default_rng(seed)
    seen: set[tuple[tuple[str, str, Value], ...]] = set()
    out: list[tuple[tuple[str, Value], ...]] = []
    for _ in range(samples):
        combo = tuple((name, _draw(rng, name, spec)) for name, spec in parameters.items())
        # 1 and 1.0 and True are different values of a parameter.
        key = tuple((k, type(v).__name__, v) for k, v in combo)
        if key not in seen:
            seen.add(key)
            out.append(combo)
    return out


def expand(parameters: Mapping[str, ParameterSpec], search: SearchSpec) -> tuple[Point, ...]:
    """The sweep's points in a fixed order: the grid's last parameter varies fastest."""
    if search.random is not None:
        combos = _random(parameters, search.random.samples, search.random.seed)
    else:
        combos = _grid(parameters)
    return tuple(Point(i, combo) for i, combo in enumerate(combos))
