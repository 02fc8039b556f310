"""float64 arithmetic as Prometheus gets it from Go, where Python's differs.

Python raises where Go returns an IEEE value: ``x / 0`` and ``math.fmod(x, 0)`` raise
ZeroDivisionError/ValueError, ``math.pow`` raises OverflowError and ValueError, ``math.fsum``
raises OverflowError when a partial sum passes the largest float. Go never raises: ``x / 0`` is
±Inf (NaN for ``0 / 0``), ``math.Pow`` and ``math.Mod`` have special cases for every such input,
and a sum that overflows is ±Inf. Prometheus relies on that, so this module gives the Go results.

Sums and means follow Prometheus 3 (``util/kahansum``, ``promql/engine.go`` aggregation,
``promql/functions.go`` ``avg_over_time``): Kahan summation with Neumaier's improvement; a mean
is the compensated sum divided by the count while that sum stays finite, and from the first value
that would overflow it on, an incremental mean (so ``avg`` of values near 1e308 is finite where
their sum is +Inf).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence


def div(a: float, b: float) -> float:
    """Go's ``a / b``: ±Inf for a non-zero ``a`` over a (signed) zero, NaN for ``0 / 0``."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def mod(a: float, b: float) -> float:
    """Go's ``math.Mod``: the sign of ``a``; ``x % 0``, ``±Inf % y`` and NaN operands give NaN,
    ``x % ±Inf`` is ``x``. Both compute the exact remainder, so finite results agree with fmod."""
    if b == 0 or math.isinf(a) or math.isnan(a) or math.isnan(b):
        return math.nan
    return math.fmod(a, b)


def _is_odd_int(y: float) -> bool:
    # Go's isOddInt: every float at or beyond 2**53 is an even integer.
    return abs(y) < 2.0**53 and y.is_integer() and int(y) % 2 == 1


def _pow_special(x: float, y: float) -> float | None:
    """The special cases of Go's ``math.Pow`` that Python's ``math.pow`` raises on or differs in;
    None for an ordinary pair."""
    if y == 0 or x == 1:
        return 1.0
    if math.isnan(x) or math.isnan(y):
        return math.nan
    if x == 0:
        if y < 0:
            return math.copysign(math.inf, x) if _is_odd_int(y) else math.inf
        return x if _is_odd_int(y) else 0.0
    if math.isinf(y):
        if x == -1:
            return 1.0
        return 0.0 if (abs(x) < 1) == (y > 0) else math.inf
    if math.isinf(x):
        return None  # the C library agrees with Go on infinite bases
    if x < 0 and not y.is_integer():
        return math.nan  # a finite negative base and a non-integer exponent
    if abs(y) == 0.5:  # Go takes the (exactly rounded) square root here
        return math.sqrt(x) if y > 0 else 1 / math.sqrt(x)
    return None


def pow_(x: float, y: float) -> float:
    """Go's ``math.Pow(x, y)``, which PromQL's ``^`` is.

    An overflow is +Inf, or -Inf for a negative base and an odd integer exponent (``(-2) ^ 1025``
    is -Inf); an underflow is a zero of the same sign. Finite ordinary results come from the C
    library's ``pow``, which may differ from Go's own algorithm in the last bit.
    """
    special = _pow_special(x, y)
    if special is not None:
        return special
    try:
        return math.pow(x, y)
    except OverflowError:
        return -math.inf if x < 0 and _is_odd_int(y) else math.inf


def go_max(a: float, b: float) -> float:
    """Go's ``math.Max``: +Inf wins, then NaN; +0 is larger than -0."""
    if a == math.inf or b == math.inf:
        return math.inf
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == 0 and a == b:
        return b if math.copysign(1.0, a) < 0 else a
    return a if a > b else b


def go_min(a: float, b: float) -> float:
    """Go's ``math.Min``: -Inf wins, then NaN; -0 is smaller than +0."""
    if a == -math.inf or b == -math.inf:
        return -math.inf
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == 0 and a == b:
        return a if math.copysign(1.0, a) < 0 else b
    return a if a < b else b


def ceil(x: float) -> float:
    """Go's ``math.Ceil``: ±Inf and NaN unchanged (Python's raises), and a zero result keeps the
    sign of ``x`` (``ceil(-0.5)`` is -0)."""
    if not math.isfinite(x):
        return x
    return math.copysign(float(math.ceil(x)), x) if -1 < x <= 0 else float(math.ceil(x))


def floor(x: float) -> float:
    """Go's ``math.Floor``: ±Inf and NaN unchanged, ``floor(-0)`` is -0."""
    if not math.isfinite(x):
        return x
    return math.copysign(0.0, x) if x == 0 else float(math.floor(x))


def kahan_inc(inc: float, total: float, c: float) -> tuple[float, float]:
    """One step of Kahan-Neumaier summation: the new running sum and compensation. Once the sum
    is infinite the compensation is dropped (it would only turn the result into NaN)."""
    t = total + inc
    if math.isinf(t):
        c = 0.0
    elif abs(total) >= abs(inc):
        c += (total - t) + inc
    else:
        c += (inc - t) + total
    return t, c


def kahan_sum(values: Sequence[float]) -> float:
    """The compensated sum of ``values`` (at least one), in their order, as the ``sum``
    aggregation and ``sum_over_time`` compute it; ±Inf when it overflows. (The aggregation starts
    from the first value, ``sum_over_time`` from 0; the results are the same, a zero sum being +0
    either way once the compensation is added.)"""
    total, c = values[0], 0.0
    for v in values[1:]:
        total, c = kahan_inc(v, total, c)
    return total if math.isinf(total) else total + c


def mean(values: Sequence[float]) -> float:
    """The mean of ``values`` (at least one) as ``avg`` and ``avg_over_time`` compute it."""
    total, c, count = values[0], 0.0, 1.0
    avg = 0.0
    incremental = False
    for v in values[1:]:
        count += 1
        if not incremental:
            new_total, new_c = kahan_inc(v, total, c)
            if not math.isinf(new_total):
                total, c = new_total, new_c
                continue
            # The sum would overflow: go on with the mean of what was summed so far.
            incremental = True
            avg = total / (count - 1)
            c /= count - 1
        q = (count - 1) / count
        avg, c = kahan_inc(v / count, q * avg, q * c)
    if incremental:
        return avg + c
    return total / count + c / count


def search(n: int, pred: Callable[[int], bool]) -> int:
    """Go's ``sort.Search``: the smallest ``i`` in [0, n) with ``pred(i)`` true, else ``n``,
    found by the same bisection (so NaN counts, for which no comparison holds, land where Go's
    do, unlike ``bisect``'s)."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if not pred(mid):
            lo = mid + 1
        else:
            hi = mid
    return lo
