"""Go's integer arithmetic where the HPA controller relies on it.

The controller does its arithmetic in ``int64``/``int32`` and ``float64``. Python floats are IEEE
doubles like Go's ``float64``, but integer division and float-to-int conversion differ: Go
truncates toward zero, and converting a float that does not fit (or NaN, or an infinity) gives
the minimum integer on amd64 (``CVTTSD2SI``), the platform kube-controller-manager runs on.
"""

from __future__ import annotations

import math

INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def div_trunc(a: int, b: int) -> int:
    """``a / b`` for Go integers (truncated toward zero); ``b`` must not be 0."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def to_int32(x: float) -> int:
    """``int32(x)`` on amd64: truncation; out of range, NaN or an infinity give MinInt32."""
    if not math.isfinite(x) or not INT32_MIN <= math.trunc(x) <= INT32_MAX:
        return INT32_MIN
    return math.trunc(x)


def to_int64(x: float) -> int:
    """``int64(x)`` on amd64: truncation; out of range, NaN or an infinity give MinInt64."""
    if not math.isfinite(x) or not INT64_MIN <= math.trunc(x) <= INT64_MAX:
        return INT64_MIN
    return math.trunc(x)


def ceil_int32(x: float) -> int:
    """``int32(math.Ceil(x))``."""
    return to_int32(math.ceil(x)) if math.isfinite(x) else INT32_MIN


def fdiv(a: float, b: float) -> float:
    """IEEE division as Go's float64 does it: ``x/0`` is ±Inf, ``0/0`` is NaN."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b
