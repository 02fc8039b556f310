"""Go's float64 results where Python's differ or raise: the special cases Go's ``math`` package
documents for Pow, Mod, Max, Min, Ceil and Floor, division by zero, and Prometheus 3's
compensated sum and overflow-safe mean."""

from __future__ import annotations

import math

import pytest

from gpuplane.autoscaler.promql import gofloat

INF, NAN = math.inf, math.nan


def same(a: float, b: float) -> bool:
    """Equal as Go prints them: NaN is NaN, and the sign of a zero counts."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


# Go's math.Pow special cases, in the order its documentation lists them, then overflow.
POW_CASES = [
    (NAN, 0.0, 1.0),  # Pow(x, ±0) = 1 for any x
    (2.0, -0.0, 1.0),
    (1.0, NAN, 1.0),  # Pow(1, y) = 1 for any y
    (1.0, INF, 1.0),
    (-3.5, 1.0, -3.5),  # Pow(x, 1) = x
    (NAN, 2.0, NAN),
    (2.0, NAN, NAN),
    (0.0, -3.0, INF),  # Pow(±0, y) = ±Inf for y an odd integer < 0
    (-0.0, -3.0, -INF),
    (0.0, -INF, INF),
    (-0.0, INF, 0.0),
    (-0.0, -2.0, INF),  # finite y < 0 and not an odd integer
    (-0.0, -0.5, INF),
    (-0.0, 3.0, -0.0),  # Pow(±0, y) = ±0 for y an odd integer > 0
    (-0.0, 2.0, 0.0),
    (-0.0, 0.5, 0.0),
    (-1.0, INF, 1.0),
    (-1.0, -INF, 1.0),
    (2.0, INF, INF),
    (-2.0, -INF, 0.0),
    (0.5, INF, 0.0),
    (-0.5, -INF, INF),
    (INF, 0.5, INF),
    (INF, -2.0, 0.0),
    (-INF, 3.0, -INF),  # Pow(-Inf, y) = Pow(-0, -y)
    (-INF, 2.0, INF),
    (-INF, -3.0, -0.0),
    (-INF, -2.5, 0.0),
    (-8.0, 1 / 3, NAN),  # finite x < 0 and finite non-integer y
    (-2.0, 1025.0, -INF),  # overflow keeps the sign of an odd power of a negative base
    (-2.0, 1024.0, INF),
    (2.0, 1025.0, INF),
    (-1e-300, -3.0, -INF),
    (-10.0, -401.0, -0.0),  # underflow to a signed zero
    (10.0, -400.0, 0.0),
    (2.0, 0.5, math.sqrt(2.0)),
    (2.0, -0.5, 1 / math.sqrt(2.0)),
    (2.0, 10.0, 1024.0),
    (9.0, 0.5, 3.0),
]


@pytest.mark.parametrize(("x", "y", "want"), POW_CASES)
def test_pow_follows_go(x: float, y: float, want: float) -> None:
    assert same(gofloat.pow_(x, y), want)


def test_division_and_modulo_by_zero() -> None:
    assert gofloat.div(1.0, 0.0) == INF and gofloat.div(-1.0, 0.0) == -INF
    assert gofloat.div(1.0, -0.0) == -INF and gofloat.div(-INF, -0.0) == INF
    assert math.isnan(gofloat.div(0.0, 0.0)) and math.isnan(gofloat.div(NAN, 0.0))
    assert gofloat.div(1.0, 4.0) == 0.25
    # math.Mod: NaN for x % 0, ±Inf % y and NaN operands; x % ±Inf is x; the sign is x's.
    for a, b in ((5.0, 0.0), (INF, 2.0), (-INF, 2.0), (NAN, 2.0), (2.0, NAN)):
        assert math.isnan(gofloat.mod(a, b))
    assert gofloat.mod(5.0, INF) == 5.0 and gofloat.mod(-5.0, 3.0) == -2.0
    assert same(gofloat.mod(-0.0, 3.0), -0.0) and gofloat.mod(5.5, -2.0) == 1.5


def test_max_min_ceil_floor() -> None:
    assert gofloat.go_max(INF, NAN) == INF and math.isnan(gofloat.go_max(1.0, NAN))
    assert gofloat.go_min(-INF, NAN) == -INF and math.isnan(gofloat.go_min(INF, NAN))
    assert same(gofloat.go_max(-0.0, 0.0), 0.0) and same(gofloat.go_max(0.0, -0.0), 0.0)
    assert same(gofloat.go_min(0.0, -0.0), -0.0) and same(gofloat.go_min(-0.0, 0.0), -0.0)
    assert gofloat.go_max(1.0, 2.0) == 2.0 and gofloat.go_min(1.0, 2.0) == 1.0
    assert same(gofloat.ceil(-0.5), -0.0) and gofloat.ceil(0.2) == 1.0
    assert same(gofloat.floor(-0.0), -0.0) and gofloat.floor(-0.5) == -1.0
    assert gofloat.ceil(INF) == INF and gofloat.floor(-INF) == -INF
    assert math.isnan(gofloat.ceil(NAN)) and gofloat.floor(1e308) == 1e308


def test_compensated_sum() -> None:
    # Kahan-Neumaier keeps the small terms a plain float sum loses.
    assert gofloat.kahan_sum([1.0, 1e100, 1.0, -1e100]) == 2.0
    assert sum([1.0, 1e100, 1.0, -1e100]) == 0.0
    # An overflow is +Inf and stays so: Prometheus does not recover 1e308 the way fsum would.
    assert gofloat.kahan_sum([1e308, 1e308]) == INF
    assert gofloat.kahan_sum([1e308, 1e308, -1e308]) == INF
    assert gofloat.kahan_sum([-1e308, -1e308]) == -INF
    assert math.isnan(gofloat.kahan_sum([INF, -INF])) and math.isnan(gofloat.kahan_sum([NAN, 1.0]))
    # adding the compensation (+0) makes a zero sum +0, as in Go
    assert same(gofloat.kahan_sum([-0.0]), 0.0) and same(gofloat.kahan_sum([-0.0, -0.0]), 0.0)


def test_mean_does_not_overflow() -> None:
    assert gofloat.mean([1e308, 1e308]) == 1e308
    assert gofloat.mean([1.7e308, 1.7e308, 1.7e308, 1.7e308]) == pytest.approx(1.7e308)
    assert gofloat.mean([1e308, 1e308, -1e308, -1e308]) == pytest.approx(0.0, abs=1e292)
    assert gofloat.mean([-1e308, -1e308, -1e308]) == pytest.approx(-1e308)
    assert gofloat.mean([1.0, 2.0, 4.0]) == pytest.approx(7 / 3)
    assert gofloat.mean([0.1, 0.2, 0.3]) == pytest.approx(0.2)
    assert gofloat.mean([INF, 1.0]) == INF and math.isnan(gofloat.mean([INF, -INF]))
    assert math.isnan(gofloat.mean([NAN, 1.0, 2.0]))


def test_search_is_go_sort_search() -> None:
    counts = [0.0, 10.0, 10.0, 40.0]
    assert gofloat.search(len(counts), lambda i: counts[i] >= 10.0) == 1
    assert gofloat.search(len(counts), lambda i: counts[i] >= 50.0) == 4
    assert gofloat.search(len(counts), lambda i: counts[i] >= NAN) == 4  # bisect would say 0
    assert gofloat.search(0, lambda i: True) == 0
