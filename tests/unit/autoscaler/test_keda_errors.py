"""A query that fails, for whatever reason, is a failing trigger as KEDA knows it: the Prometheus
API answers an error status, the scaler's poll carries the error, and the scale loop and the
fallback take over. No exception leaves a poll."""

from __future__ import annotations

import math
from typing import Any

import pytest

from gpuplane.autoscaler.keda import prometheus_scaler
from gpuplane.autoscaler.keda.formula import FormulaError, compile_formula
from gpuplane.autoscaler.keda.metrics_adapter import external_metric
from gpuplane.autoscaler.keda.model import ScaledObjectIn
from gpuplane.autoscaler.keda.prometheus_scaler import QueryAnswer, SeriesStorePrometheus
from gpuplane.autoscaler.keda.scale_loop import KedaSnapshot, decide
from gpuplane.autoscaler.keda.scalers import Scaler, ScalerPoll, build_scaler
from gpuplane.autoscaler.keda.state import KedaSettings, KedaState
from gpuplane.autoscaler.keda.validation import scaled_object_from_dict
from gpuplane.core.tsdb import SeriesStore, labels_of


def make_so(query: str, **spec: Any) -> ScaledObjectIn:
    return scaled_object_from_dict(
        {
            "apiVersion": "keda.sh/v1alpha1",
            "kind": "ScaledObject",
            "metadata": {"name": "so"},
            "spec": {
                "scaleTargetRef": {"name": "app"},
                "triggers": [
                    {
                        "type": "prometheus",
                        "metadata": {"serverAddress": "s", "query": query, "threshold": "5"},
                    }
                ],
                **spec,
            },
        }
    )


def scaler(so: ScaledObjectIn, api: Any) -> Scaler:
    return build_scaler(so.spec.triggers[0], 0, api)


def store() -> SeriesStore:
    st = SeriesStore()
    st.append("q", labels_of({"pod": "a"}), 0.0, 3.0)
    st.append("a", labels_of({"x": "1"}), 0.0, 1.0)
    st.append("b", labels_of({"x": "1"}), 0.0, 2.0)
    for le, count in (("0.1", 0.0), ("1", 4.0), ("+Inf", 4.0)):
        st.append("h_bucket", labels_of({"le": le}), 0.0, count)
    return st


def boom(*args: object, **kwargs: object) -> None:
    raise ZeroDivisionError("float division by zero")


def test_the_api_answers_400_for_a_bad_query_and_422_when_evaluation_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api = SeriesStorePrometheus(store())
    bad = api.query("sum(q", 10.0)
    assert bad.status == 400 and bad.error.startswith("bad_data: ")
    clash = api.query('{__name__=~"a|b"} * 1', 10.0)
    assert clash.status == 422 and "same labelset" in clash.error
    # histogram_quantile(0, ...) over an empty lowest bucket used to raise; it is NaN now.
    nan = api.query("histogram_quantile(0, h_bucket)", 10.0)
    assert nan.status == 200 and math.isnan(nan.series[0][1])
    # Whatever a future bug raises inside the evaluation is Prometheus's recovered panic.
    monkeypatch.setattr(prometheus_scaler, "evaluate", boom)
    crash = api.query("sum(q)", 10.0)
    assert crash == QueryAnswer(
        status=422, error="execution: unexpected error: ZeroDivisionError: float division by zero"
    )


def test_a_failing_evaluation_is_the_polls_error(monkeypatch: pytest.MonkeyPatch) -> None:
    so = make_so("sum(q)")
    api = SeriesStorePrometheus(store())
    assert scaler(so, api).poll(10.0) == ScalerPoll(3000, True)
    monkeypatch.setattr(prometheus_scaler, "evaluate", boom)
    failed = scaler(so, api).poll(10.0)
    assert failed == ScalerPoll(None, False, "prometheus query api returned error. status: 422")


class _Unreachable:
    def query(self, query: str, t_s: float) -> QueryAnswer:
        raise ConnectionRefusedError("dial tcp 10.0.0.1:9090: connect: connection refused")


def test_a_client_side_failure_is_the_polls_error_too() -> None:
    failed = scaler(make_so("sum(q)"), _Unreachable()).poll(10.0)
    assert failed.value_milli is None and not failed.active
    assert failed.error == (
        "error executing prometheus query: ConnectionRefusedError: "
        "dial tcp 10.0.0.1:9090: connect: connection refused"
    )


def test_the_scale_loop_and_the_fallback_take_a_failing_trigger(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(prometheus_scaler, "evaluate", boom)
    api = SeriesStorePrometheus(store())
    plain = make_so("sum(q)")
    poll = scaler(plain, api).poll(10.0)
    d = decide(KedaSnapshot(10.0, plain, 2, (poll,), 0.0, KedaState()), KedaSettings())
    ready = d.state.condition("Ready")
    assert ready is not None and ready.short() == "Ready=False/TriggerError"
    assert d.scale_to is None  # a failing trigger changes nothing by itself
    with_fb = make_so("sum(q)", fallback={"failureThreshold": 1, "replicas": 4})
    scalers = (scaler(with_fb, api),)
    state = KedaState()
    answers = []
    for _ in range(2):
        fresh = {"s0-prometheus": scalers[0].poll(10.0)}
        answer = external_metric(with_fb, scalers, "s0-prometheus", fresh, state, 2, 2)
        state = answer.state
        answers.append(answer)
    assert answers[0].error == "metric:s0-prometheus encountered error"
    assert answers[1].values_milli == (20_000,)  # the HPA is told to go to 4 replicas (5 x 4)


def test_formula_arithmetic_errors_are_formula_errors() -> None:
    names = frozenset({"a", "b"})
    assert compile_formula("ceil(a * 1e308 * 10)", names).evaluate({"a": 1.0, "b": 0.0}) == math.inf
    assert compile_formula("round(a / b)", names).evaluate({"a": -1.0, "b": 0.0}) == -math.inf
    with pytest.raises(FormulaError, match="cannot evaluate the formula"):
        compile_formula("(a * 1e308 * 10) % 2", names).evaluate({"a": 1.0, "b": 0.0})
