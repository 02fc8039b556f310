"""Evaluation at the edges where gpuplane and a real Prometheus 3 disagreed: overflowing sums and
means, ``histogram_quantile``'s special cases, Go's ``^``, ``/`` and ``%``, the left-open
lookback window, number literals, and queries nested too deeply. The expected values are what
Prometheus 3 answers; nothing here may raise anything but an InputError."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.autoscaler.promql import Scalar, Vector, evaluate
from gpuplane.core.errors import InputError
from gpuplane.core.tsdb import SeriesStore, labels_of

INF = math.inf


def store(*series: tuple[str, dict[str, str], Sequence[tuple[float, float]]]) -> SeriesStore:
    st = SeriesStore()
    for name, labels, samples in series:
        for t, v in samples:
            st.append(name, labels_of(labels), t, v)
    return st


def values(q: str, st: SeriesStore, t: float) -> list[float]:
    value = evaluate(q, st, t)
    assert isinstance(value, Vector)
    return value.values()


def only(q: str, st: SeriesStore, t: float) -> float:
    (v,) = values(q, st, t)
    return v


def scalar(q: str) -> float:
    value = evaluate(q, SeriesStore(), 0.0)
    assert isinstance(value, Scalar)
    return value.value


HUGE = store(
    ("x", {"i": "1"}, [(10, 1e308), (20, 1e308)]),
    ("x", {"i": "2"}, [(10, 1e308), (20, 1e308)]),
    ("x", {"i": "3"}, [(20, -1e308)]),
    ("neg", {"i": "1"}, [(20, -1.7e308)]),
    ("neg", {"i": "2"}, [(20, -1.7e308)]),
)


def test_sums_overflow_to_inf_and_means_do_not() -> None:
    assert only('sum(x{i!="3"})', HUGE, 20) == INF
    assert only('avg(x{i!="3"})', HUGE, 20) == 1e308
    # Once the running sum is +Inf it stays +Inf, whatever comes after (fsum would say 1e308).
    assert only("sum(x)", HUGE, 20) == INF
    assert only("avg(x)", HUGE, 20) == pytest.approx(1e308 / 3)
    assert only("sum(neg)", HUGE, 20) == -INF
    assert only("avg(neg)", HUGE, 20) == -1.7e308
    over = values('sum_over_time(x{i="1"}[1m])', HUGE, 20)
    assert over == [INF]
    assert values('avg_over_time(x{i="1"}[1m])', HUGE, 20) == [1e308]
    assert values("sum by (i) (x)", HUGE, 20) == [1e308, 1e308, -1e308]


def test_compensated_sums() -> None:
    st = store(*(("s", {"i": str(i)}, [(0, v)]) for i, v in enumerate((1.0, 1e100, 1.0, -1e100))))
    assert only("sum(s)", st, 0) == 2.0  # Kahan-Neumaier, as Prometheus sums
    series = store(("t", {}, [(i, v) for i, v in enumerate((1.0, 1e100, 1.0, -1e100))]))
    assert only("sum_over_time(t[1m])", series, 3) == 2.0
    assert only("avg_over_time(t[1m])", series, 3) == 0.5


@pytest.mark.parametrize(
    "q", ["stddev(x)", "stdvar(x)", "quantile(0.5, x)", 'count_values("v", x)']
)
def test_aggregations_outside_the_subset_are_refused(q: str) -> None:
    with pytest.raises(InputError, match="is not supported"):
        evaluate(q, HUGE, 20)


def buckets(counts: dict[str, float]) -> SeriesStore:
    return store(*(("h_bucket", {"le": le}, [(0, c)]) for le, c in counts.items()))


EMPTY_LOW = buckets({"0.1": 0, "0.5": 0, "1": 40, "+Inf": 50})


@pytest.mark.parametrize(
    ("q", "hist", "want"),
    [
        ("0", EMPTY_LOW, math.nan),  # rank 0 in an empty lowest bucket: 0/0
        ("0", buckets({"0.1": 10, "+Inf": 50}), 0.0),
        ("0", buckets({"-1": 0, "0": 10, "+Inf": 20}), -1.0),  # lowest bound <= 0 is returned
        ("0.5", EMPTY_LOW, 0.5 + 0.5 * (25 / 40)),
        ("NaN", EMPTY_LOW, math.nan),
        ("-0.5", EMPTY_LOW, -INF),
        ("1.5", EMPTY_LOW, INF),
        ("0.5", buckets({"+Inf": 10}), math.nan),  # fewer than two buckets
        ("0.5", buckets({"1": 10, "2": 20}), math.nan),  # no +Inf bucket
        ("0.5", buckets({"1": 0, "+Inf": 0}), math.nan),  # no observations
        # a count below its predecessor is raised to it: 5 becomes 10, rank 20 is in (2, 3]
        ("0.5", buckets({"1": 10, "2": 5, "3": 30, "+Inf": 40}), 2.5),
        ("0.5", buckets({"1": math.nan, "+Inf": math.nan}), 1.0),  # sort.Search finds nothing
        ("1", buckets({"1": 10, "2": 20, "+Inf": 20}), 2.0),
    ],
)
def test_histogram_quantile_edges(q: str, hist: SeriesStore, want: float) -> None:
    got = only(f"histogram_quantile({q}, h_bucket)", hist, 0)
    assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want)


@pytest.mark.parametrize(
    ("q", "want"),
    [
        ("(-2) ^ 1025", -INF),
        ("(-2) ^ 1024", INF),
        ("2 ^ 1025", INF),
        ("-2 ^ 1025", -INF),  # -(2 ^ 1025): unary minus binds looser than ^
        ("0 ^ -1", INF),
        ("(-8) ^ (1/3)", math.nan),
        ("(-1) ^ Inf", 1.0),
        ("0.5 ^ -Inf", INF),
        ("NaN ^ 0", 1.0),
        ("1 ^ NaN", 1.0),
        ("(-Inf) ^ 3", -INF),
        ("10 ^ -400", 0.0),
        ("1 / 0", INF),
        ("-1 / 0", -INF),
        ("0 / 0", math.nan),
        ("5 % 0", math.nan),
        ("Inf % 2", math.nan),
        ("5 % Inf", 5.0),
        ("-5 % 3", -2.0),
        ("1e308 * 10", INF),
        ("1e308 + 1e308 - 1e308", INF),
    ],
)
def test_scalar_arithmetic_is_go_arithmetic(q: str, want: float) -> None:
    got = scalar(q)
    assert (math.isnan(got) and math.isnan(want)) or got == want


def test_vector_arithmetic_and_functions_do_not_raise() -> None:
    st = store(
        ("v", {"i": "0"}, [(0, 0.0)]),
        ("v", {"i": "1"}, [(0, -0.5)]),
        ("v", {"i": "2"}, [(0, math.nan)]),
        ("v", {"i": "3"}, [(0, INF)]),
    )
    assert [str(v) for v in values("v / 0", st, 0)] == ["nan", "-inf", "nan", "inf"]
    assert [str(v) for v in values("v % 0", st, 0)] == ["nan"] * 4
    assert [str(v) for v in values("v ^ -1", st, 0)] == ["inf", "-2.0", "nan", "0.0"]
    assert [str(v) for v in values("0 ^ v", st, 0)] == ["1.0", "inf", "nan", "0.0"]
    assert [str(v) for v in values("ceil(v)", st, 0)] == ["0.0", "-0.0", "nan", "inf"]
    assert [str(v) for v in values("floor(v)", st, 0)] == ["0.0", "-1.0", "nan", "inf"]
    assert [str(v) for v in values("clamp_min(v, Inf)", st, 0)] == ["inf"] * 4  # Max(+Inf, NaN)
    assert [str(v) for v in values("clamp_max(v, NaN)", st, 0)] == ["nan"] * 4


LOOKBACK = store(("up", {}, [(0, 1.0)]), ("frac", {}, [(0.7, 1.0)]))


def test_the_lookback_window_is_open_on_the_left() -> None:
    # A sample exactly 5 minutes old is gone for the instant selector and for [5m] alike.
    assert values("up", LOOKBACK, 299.999) == [1.0]
    assert values("up", LOOKBACK, 300) == []
    assert values("last_over_time(up[5m])", LOOKBACK, 300) == []
    assert values("last_over_time(up[5m])", LOOKBACK, 299.999) == [1.0]
    # The boundary is computed on milliseconds: 300.7 - 300 is just below 0.7 in floats.
    assert values("frac", LOOKBACK, 300.7) == []
    assert values("count_over_time(frac[5m])", LOOKBACK, 300.7) == []
    assert values("frac", LOOKBACK, 300.699) == [1.0]
    # --query.lookback-delta (the CLI's --lookback) moves the same left-open boundary.
    for t, lookback, want in ((60.0, 60.0, 0), (59.0, 60.0, 1), (299.0, 0.0, 1), (300.0, 0.0, 0)):
        # a lookback delta of 0 is the engine's default, 5 minutes
        got = evaluate("up", LOOKBACK, t, lookback_s=lookback)
        assert isinstance(got, Vector) and len(got) == want


@pytest.mark.parametrize(
    ("literal", "want"),
    [("010", 8.0), ("08", 8.0), ("0", 0.0), ("0x1f", 31.0), ("1e-999", 0.0), ("1.", 1.0)],
)
def test_number_literals_as_prometheus_reads_them(literal: str, want: float) -> None:
    # strconv.ParseInt(s, 0, 64) first: a leading zero is octal; then ParseFloat.
    assert scalar(literal) == want
    assert scalar("99999999999999999999") == 1e20


@pytest.mark.parametrize(
    ("q", "problem"),
    [
        ("1e999", "value out of range"),
        ("0x" + "f" * 17, "invalid syntax"),
        ("x[" + "9" * 30 + "y]", "duration out of range"),
        ("-" * 3000 + "1", "nested too deeply"),
        ("1" + " + 1" * 3000, "nested too deeply"),
        ("(" * 3000 + "1" + ")" * 3000, "nested too deeply"),
        ('x{a=~"a{5000000000}"}', "invalid regular expression"),  # Python's re overflowed
        ('x{a=~"' + "(" * 3000 + "a" + ")" * 3000 + '"}', "invalid regular expression"),
    ],
)
def test_literals_and_nesting_beyond_limits_are_input_errors(q: str, problem: str) -> None:
    with pytest.raises(InputError, match=problem):
        evaluate(q, SeriesStore(), 0.0)


FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [0.0, -0.0, 1e308, -1e308, 1.7976931348623157e308, 5e-324, -5e-324, 1.0, -1.0, 2.0, -2.0]
)
TEMPLATES = [
    "sum(v)",
    "avg(v)",
    "min(v) - max(v)",
    "count(v) / {k}",
    "sum_over_time(v[1h])",
    "avg_over_time(v[1h])",
    "min_over_time(v[1h]) + max_over_time(v[1h])",
    "rate(v[1h]) + increase(v[1h]) + delta(v[1h]) + irate(v[1h])",
    "histogram_quantile({k}, h_bucket)",
    "histogram_quantile({k}, sum by (le) (rate(h_bucket[1h])))",
    "v ^ {k}",
    "{k} ^ v",
    "v / {k}",
    "{k} / v",
    "v % {k}",
    "{k} % v",
    "v * {k} - v",
    "v + v",
    "v / v",
    "v % v",
    "v ^ v",
    "ceil(v) + floor(v) + abs(v)",
    "clamp_min(v, {k}) + clamp_max(v, {k})",
    "scalar(sum(v)) ^ {k}",
    "v > {k}",
    "v == bool {k}",
    "{k} ^ {k} % {k} / {k}",
]


def promql_literal(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Inf" if x > 0 else "(-Inf)"
    return f"({x!r})"


@settings(max_examples=400, deadline=None)
@given(st.lists(FLOATS, min_size=2, max_size=6), FLOATS, st.sampled_from(TEMPLATES))
def test_no_float_input_makes_evaluation_raise(
    samples: list[float], k: float, template: str
) -> None:
    """Whatever the sample values and the scalar, evaluation returns or is an InputError."""
    db = SeriesStore()
    for i, series in enumerate((samples, samples[::-1])):
        for j, v in enumerate(series):
            db.append("v", labels_of({"i": str(i)}), 60.0 * j, v)
    for le, v in zip(("0", "0.5", "1", "+Inf"), sorted(samples, key=abs), strict=False):
        for j in range(3):
            db.append("h_bucket", labels_of({"le": le}), 60.0 * j, v * j)
    query = template.format(k=promql_literal(k))
    with contextlib.suppress(InputError):
        evaluate(query, db, 60.0 * (len(samples) - 1))
