"""PromQL evaluation against hand-computed values (rate extrapolation, counter resets,
histogram_quantile interpolation) and Prometheus's vector semantics."""

from __future__ import annotations

import math

import pytest

from gpuplane.autoscaler.promql import Scalar, Vector, evaluate
from gpuplane.autoscaler.promql.functions import bucket_quantile
from gpuplane.autoscaler.promql.series_file import load_series_text
from gpuplane.core.errors import InputError
from gpuplane.core.tsdb import SeriesStore, labels_of


def store_of(
    series: dict[tuple[str, tuple[tuple[str, str], ...]], list[tuple[float, float]]],
) -> SeriesStore:
    st = SeriesStore()
    for (name, labels), samples in series.items():
        for t, v in samples:
            st.append(name, labels_of(dict(labels)), t, v)
    return st


def vec(q: str, st: SeriesStore, t: float) -> dict[tuple[tuple[str, str], ...], float]:
    value = evaluate(q, st, t)
    assert isinstance(value, Vector)
    return {s.labels: s.value for s in value.samples}


def one(q: str, st: SeriesStore, t: float) -> float:
    got = vec(q, st, t)
    assert len(got) == 1, got
    return next(iter(got.values()))


RESET = store_of({("req_total", (("pod", "a"),)): [(15, 10), (30, 20), (45, 5), (60, 15)]})


def test_increase_with_a_counter_reset() -> None:
    # delta 15 - 10 = 5, plus 20 lost at the reset = 25 over 45 s of samples; the first sample
    # is 15 s after the window start (< 1.1 x 15 s average) so extrapolate to it: 25 * 60/45.
    assert one("increase(req_total[1m])", RESET, 60) == pytest.approx(100 / 3)
    assert one("rate(req_total[1m])", RESET, 60) == pytest.approx(100 / 3 / 60)
    # delta() does not treat drops as resets.
    assert one("delta(req_total[1m])", RESET, 60) == pytest.approx(5 * 60 / 45)


def test_extrapolation_stops_at_half_an_interval_and_at_zero() -> None:
    late = store_of({("c", ()): [(30, 10), (45, 25), (60, 40)]})
    # first sample 30 s after the window start (>= 16.5 s): extrapolate only 7.5 s.
    assert one("increase(c[1m])", late, 60) == pytest.approx(30 * 37.5 / 30)
    from_zero = store_of({("c", ()): [(30, 0), (45, 15), (60, 30)]})
    # a counter that was 0 at its first sample is never extrapolated below zero.
    assert one("increase(c[1m])", from_zero, 60) == pytest.approx(30)


def test_rate_needs_two_samples_and_drops_the_name() -> None:
    st = store_of({("c", (("a", "1"),)): [(50, 1)], ("c", (("a", "2"),)): [(40, 1), (50, 3)]})
    got = vec("rate(c[1m])", st, 60)
    assert list(got) == [(("a", "2"),)]


def test_irate_and_over_time() -> None:
    assert one("irate(req_total[1m])", RESET, 60) == pytest.approx(10 / 15)
    assert one("avg_over_time(req_total[1m])", RESET, 60) == pytest.approx(12.5)
    assert one("max_over_time(req_total[1m])", RESET, 60) == 20
    assert one("count_over_time(req_total[1m])", RESET, 60) == 4
    assert vec("last_over_time(req_total[1m])", RESET, 60) == {
        (("__name__", "req_total"), ("pod", "a")): 15
    }


BUCKETS = [(0.1, 10.0), (0.5, 30.0), (1.0, 40.0), (math.inf, 50.0)]


@pytest.mark.parametrize(
    ("q", "want"),
    [
        (0.5, 0.1 + 0.4 * (15 / 20)),  # rank 25 in (0.1, 0.5]
        (0.05, 0.1 * (2.5 / 10)),  # rank 2.5 in the first bucket, which starts at 0
        (0.99, 1.0),  # rank in the +Inf bucket: the highest finite bound
        (0.8, 1.0),  # rank 40 is exactly the le=1 count
        (1.5, math.inf),
        (-0.1, -math.inf),
    ],
)
def test_bucket_quantile_hand_computed(q: float, want: float) -> None:
    assert bucket_quantile(q, BUCKETS) == pytest.approx(want)


def test_bucket_quantile_edges() -> None:
    assert math.isnan(bucket_quantile(0.5, [(0.1, 1), (1, 2)]))  # no +Inf bucket
    assert math.isnan(bucket_quantile(0.5, [(0.1, 0), (math.inf, 0)]))  # no observations
    # counts forced monotonic: 8 becomes 10
    broken: list[tuple[float, float]] = [(0.1, 10), (0.5, 8), (1.0, 40), (math.inf, 50)]
    assert bucket_quantile(0.5, broken) == pytest.approx(0.5 + 0.5 * (15 / 30))
    assert bucket_quantile(0.1, [(-1, 5), (0, 10), (math.inf, 20)]) == -1
    # equal bounds are merged
    assert bucket_quantile(0.5, [(1, 5), (1, 5), (math.inf, 20)]) == pytest.approx(1.0)


def test_histogram_quantile_over_rates_with_grouping() -> None:
    series: dict[tuple[str, tuple[tuple[str, str], ...]], list[tuple[float, float]]] = {}
    for pod, scale in (("a", 1.0), ("b", 3.0)):
        for le, frac in (("0.1", 0.2), ("0.5", 0.6), ("1", 0.8), ("+Inf", 1.0)):
            series[("lat_bucket", (("le", le), ("pod", pod)))] = [
                (t, scale * frac * t) for t in range(0, 301, 15)
            ]
    series[("lat_bucket", (("le", "bogus"), ("pod", "a")))] = [(300, 1.0)]
    st = store_of(series)
    total = one("histogram_quantile(0.9, sum by (le) (rate(lat_bucket[5m])))", st, 300)
    assert total == pytest.approx(1.0 + 0.0)  # rank 0.9 of 4/s lands in (1, +Inf]: 1.0
    per_pod = vec("histogram_quantile(0.5, rate(lat_bucket[5m]))", st, 300)
    assert set(per_pod) == {(("pod", "a"),), (("pod", "b"),)}
    assert all(v == pytest.approx(0.1 + 0.4 * (0.3 / 0.4)) for v in per_pod.values())
    # the le="bogus" series is skipped, as Prometheus skips a malformed le
    raw = vec('histogram_quantile(0.5, lat_bucket{pod="a"})', st, 300)
    assert raw == {(("pod", "a"),): pytest.approx(0.4)}


LOAD = store_of(
    {
        ("gpu_util", (("gpu", "0"), ("node", "n1"), ("team", "ml"))): [(100, 50)],
        ("gpu_util", (("gpu", "1"), ("node", "n1"), ("team", "ml"))): [(100, 70)],
        ("gpu_util", (("gpu", "0"), ("node", "n2"))): [(100, 90)],
        ("gpu_mem", (("gpu", "0"), ("node", "n1"))): [(100, 10)],
        ("gpu_mem", (("gpu", "1"), ("node", "n1"))): [(100, 20)],
        ("stale", ()): [(0, 1)],
    }
)


def test_selectors_lookback_and_empty_labels() -> None:
    assert vec("stale", LOAD, 200) == {(("__name__", "stale"),): 1}
    assert vec("stale", LOAD, 301) == {}  # older than the 5 minute lookback
    assert len(vec('gpu_util{team=""}', LOAD, 100)) == 1  # the series without a team label
    assert len(vec('gpu_util{team!=""}', LOAD, 100)) == 2
    assert len(vec('{__name__=~"gpu_.*", gpu="0"}', LOAD, 100)) == 3
    assert len(vec('gpu_util{node=~"n"}', LOAD, 100)) == 0  # anchored


def test_aggregations() -> None:
    assert vec("sum by (node) (gpu_util)", LOAD, 100) == {
        (("node", "n1"),): 120,
        (("node", "n2"),): 90,
    }
    assert vec("avg(gpu_util) without (gpu, team)", LOAD, 100) == {
        (("node", "n1"),): 60,
        (("node", "n2"),): 90,
    }
    assert one("max(gpu_util)", LOAD, 100) == 90 and one("min(gpu_util)", LOAD, 100) == 50
    assert one("count(gpu_util)", LOAD, 100) == 3
    assert vec("sum(nothing)", LOAD, 100) == {}


def test_binary_operators_between_vectors() -> None:
    ratio = vec("gpu_mem / ignoring(team) gpu_util", LOAD, 100)
    assert ratio == {(("gpu", "0"), ("node", "n1")): 0.2, (("gpu", "1"), ("node", "n1")): 20 / 70}
    on = vec("sum by (node) (gpu_util) - on(node) sum by (node) (gpu_mem)", LOAD, 100)
    assert on == {(("node", "n1"),): 90}
    with pytest.raises(InputError, match="many-to-many matching not allowed"):
        evaluate("gpu_util / on(node) gpu_mem", LOAD, 100)


def test_comparisons_filter_or_return_bool() -> None:
    kept = vec("gpu_util > 60", LOAD, 100)
    assert set(kept.values()) == {70, 90}
    assert all(("__name__", "gpu_util") in labels for labels in kept)
    flags = vec("gpu_util > bool 60", LOAD, 100)
    assert sorted(flags.values()) == [0, 1, 1]
    assert all(k != "__name__" for labels in flags for k, _ in labels)
    assert set(vec("60 < gpu_util", LOAD, 100).values()) == {70, 90}  # the vector's values


def test_set_operators() -> None:
    assert len(vec("gpu_util and on(gpu, node) gpu_mem", LOAD, 100)) == 2
    assert len(vec("gpu_util unless on(gpu, node) gpu_mem", LOAD, 100)) == 1
    assert len(vec("gpu_mem or on(gpu, node) gpu_util", LOAD, 100)) == 3


def test_vector_scalar_arithmetic_and_functions() -> None:
    assert vec("gpu_mem * 2", LOAD, 100) == {
        (("gpu", "0"), ("node", "n1")): 20,
        (("gpu", "1"), ("node", "n1")): 40,
    }
    value = evaluate("scalar(sum(gpu_mem)) + 1", LOAD, 100)
    assert isinstance(value, Scalar) and value.value == 31
    assert vec("clamp_max(gpu_mem, 15)", LOAD, 100)[(("gpu", "1"), ("node", "n1"))] == 15
    assert one("vector(time())", LOAD, 100) == 100
    with pytest.raises(InputError, match="vector cannot contain metrics with the same labelset"):
        twins = store_of({("a", (("x", "1"),)): [(0, 1)], ("b", (("x", "1"),)): [(0, 2)]})
        evaluate('{__name__=~"a|b"} * 1', twins, 10)


def test_sample_files_report_located_mistakes() -> None:
    st = load_series_text('{"series": [{"name": "x", "samples": [[0, "NaN"], [5, 2]]}]}', "s.json")
    assert math.isnan(next(iter(st.series("x"))).values[0])
    with pytest.raises(InputError, match=r"s\.csv:1: CSV header lacks value"):
        load_series_text("t,name\n0,x\n", "s.csv")
    with pytest.raises(InputError, match="older than"):
        load_series_text("t,name,value\n5,x,1\n1,x,2\n", "s.csv")
    with pytest.raises(InputError, match=r"series\[0\].name"):
        load_series_text('{"series": [{"name": "1bad", "samples": []}]}', "s.json")
