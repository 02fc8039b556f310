"""KEDA at run time: the Prometheus scaler's reading of answers, the scale loop (activation,
cooldown, idle, errors, pauses), fallback, scalingModifiers and what the HPA gets."""

from __future__ import annotations

import math
from typing import Any

import pytest

from gpuplane.autoscaler.hpa.controller import HpaSnapshot
from gpuplane.autoscaler.hpa.controller import decide as hpa_decide
from gpuplane.autoscaler.hpa.metrics import MetricsSnapshot
from gpuplane.autoscaler.hpa.pods import PodInfo
from gpuplane.autoscaler.hpa.settings import HpaControllerSettings
from gpuplane.autoscaler.keda.formula import FormulaError, compile_formula
from gpuplane.autoscaler.keda.hpa_generation import hpa_for
from gpuplane.autoscaler.keda.metrics_adapter import external_metric
from gpuplane.autoscaler.keda.model import ScaledObjectIn
from gpuplane.autoscaler.keda.prometheus_scaler import (
    PrometheusMetadata,
    QueryAnswer,
    ScalerError,
    SeriesStorePrometheus,
    metric_in_milli,
    read_answer,
)
from gpuplane.autoscaler.keda.scale_loop import KedaSnapshot, decide
from gpuplane.autoscaler.keda.scalers import Scaler, ScalerPoll, build_scaler
from gpuplane.autoscaler.keda.state import KedaCondition, KedaSettings, KedaState
from gpuplane.autoscaler.keda.validation import scaled_object_from_dict
from gpuplane.core.tsdb import SeriesStore, labels_of

META = PrometheusMetadata("http://p:9090", "sum(q)", threshold=5.0, activation_threshold=1.0)
SETTINGS = KedaSettings()


def cond(state: KedaState, kind: str) -> KedaCondition:
    """The state's condition of ``kind``, which the test expects to be there."""
    found = state.condition(kind)
    assert found is not None, kind
    return found


def make_so(**spec: Any) -> ScaledObjectIn:
    triggers = spec.pop(
        "triggers",
        [
            {
                "type": "prometheus",
                "name": "queue",
                "metadata": {"serverAddress": "http://p:9090", "query": "sum(q)", "threshold": "5"},
            }
        ],
    )
    annotations = spec.pop("annotations", {})
    return scaled_object_from_dict(
        {
            "apiVersion": "keda.sh/v1alpha1",
            "kind": "ScaledObject",
            "metadata": {"name": "so", "annotations": annotations},
            "spec": {"scaleTargetRef": {"name": "app"}, "triggers": triggers, **spec},
        }
    )


def scalers_of(so: ScaledObjectIn, api: Any = None) -> tuple[Scaler, ...]:
    return tuple(build_scaler(t, i, api) for i, t in enumerate(so.spec.triggers))


def test_read_answer_follows_the_prometheus_scaler() -> None:
    assert read_answer(META, QueryAnswer(series=(((), 7.5),))) == 7.5
    assert read_answer(META, QueryAnswer()) == 0.0  # empty and ignoreNullValues (default true)
    assert read_answer(META, QueryAnswer(series=(((), math.inf),))) == 0.0
    strict = PrometheusMetadata("s", "sum(q)", 5.0, ignore_null_values=False)
    with pytest.raises(ScalerError, match="target may be lost, the result is empty"):
        read_answer(strict, QueryAnswer())
    with pytest.raises(ScalerError, match=r"prometheus query returns \+Inf"):
        read_answer(strict, QueryAnswer(series=(((), math.inf),)))
    with pytest.raises(ScalerError, match="prometheus query sum\\(q\\) returned multiple elements"):
        two = ((("a", "1"),), 1.0), ((("a", "2"),), 2.0)
        read_answer(META, QueryAnswer(series=two))
    with pytest.raises(ScalerError, match="status: 400"):
        read_answer(META, QueryAnswer(status=400))
    with pytest.raises(ScalerError, match="cannot unmarshal number"):
        read_answer(META, QueryAnswer(scalar=3.0))
    assert metric_in_milli(1.23456) == 1234 and metric_in_milli(-0.0019) == -1


def test_prometheus_scaler_over_the_series_store() -> None:
    store = SeriesStore()
    store.append("q", labels_of({"pod": "a"}), 0.0, 3.0)
    store.append("q", labels_of({"pod": "b"}), 0.0, 4.0)
    so = make_so()
    (scaler,) = scalers_of(so, SeriesStorePrometheus(store))
    assert scaler.poll(10.0) == ScalerPoll(7000, True)
    one = make_so(
        triggers=[
            {
                "type": "prometheus",
                "metadata": {"serverAddress": "s", "query": "q", "threshold": "5"},
            }
        ]
    )
    (multi,) = scalers_of(one, SeriesStorePrometheus(store))
    assert multi.poll(10.0).error == "prometheus query q returned multiple elements"
    assert ScalerPoll(0, False) == scalers_of(so, SeriesStorePrometheus(SeriesStore()))[0].poll(0)


def loop(
    so: ScaledObjectIn, current: int, poll: ScalerPoll | None, now: float, state: KedaState
) -> Any:
    return decide(KedaSnapshot(now, so, current, (poll,), created_s=0.0, state=state), SETTINGS)


ACTIVE, IDLE = ScalerPoll(7000, True), ScalerPoll(500, False)
FAIL = ScalerPoll(None, False, "prometheus query api returned error. status: 503")


def test_activation_from_zero_and_cooldown_back_to_zero() -> None:
    so = make_so(cooldownPeriod=60)
    d = loop(so, 0, ACTIVE, 100.0, KedaState())
    assert d.scale_to == 1 and d.state.last_active_s == 100.0
    assert d.state.condition("Active").reason == "ScalerActive"
    d = loop(so, 3, ACTIVE, 130.0, d.state)
    assert d.scale_to is None and d.state.last_active_s == 130.0  # the HPA owns 1..max
    d = loop(so, 3, IDLE, 160.0, d.state)
    assert d.scale_to is None and d.state.condition("Active").reason == "ScalerCooldown"
    d = loop(so, 3, IDLE, 190.0, d.state)
    assert d.scale_to is None  # 130 + 60 is not before 190
    d = loop(so, 3, IDLE, 191.0, d.state)
    assert d.scale_to == 0


def test_activation_threshold_is_strict() -> None:
    so = make_so(
        triggers=[
            {
                "type": "prometheus",
                "metadata": {
                    "serverAddress": "s",
                    "query": "q",
                    "threshold": "5",
                    "activationThreshold": "2",
                },
            }
        ]
    )
    store = SeriesStore()
    store.append("q", (), 0.0, 2.0)
    (scaler,) = scalers_of(so, SeriesStorePrometheus(store))
    assert not scaler.poll(0.0).active


def test_min_replicas_and_idle_replicas() -> None:
    so = make_so(minReplicaCount=2, idleReplicaCount=0)
    assert loop(so, 0, ACTIVE, 10.0, KedaState()).scale_to == 2
    assert loop(so, 2, IDLE, 300.0, KedaState(last_active_s=0.0)).scale_to is None
    d = loop(so, 2, IDLE, 301.0, KedaState(last_active_s=0.0))
    assert d.scale_to == 0  # to idleReplicaCount once the 300 s cooldown has passed
    so_min = make_so(minReplicaCount=3)
    assert loop(so_min, 1, IDLE, 10.0, KedaState()).scale_to == 3
    assert loop(so_min, 3, IDLE, 10.0, KedaState()).scale_to is None


def test_never_active_uses_the_initial_cooldown() -> None:
    so = make_so(initialCooldownPeriod=120)
    assert loop(so, 2, IDLE, 100.0, KedaState()).scale_to is None
    assert loop(so, 2, IDLE, 121.0, KedaState()).scale_to == 0


def test_errors_with_and_without_fallback() -> None:
    plain = make_so()
    d = loop(plain, 2, FAIL, 10.0, KedaState(last_active_s=0.0))
    assert d.state.condition("Ready").short() == "Ready=False/TriggerError" and d.scale_to is None
    with_fb = make_so(fallback={"failureThreshold": 2, "replicas": 4})
    d = loop(with_fb, 2, FAIL, 1000.0, KedaState(last_active_s=0.0))
    assert d.scale_to is None and d.state.condition("Ready").status == "True"
    two = make_so(
        triggers=[
            {
                "type": "prometheus",
                "metadata": {"serverAddress": "s", "query": "q", "threshold": "5"},
            },
            {
                "type": "prometheus",
                "metadata": {"serverAddress": "s", "query": "r", "threshold": "5"},
            },
        ]
    )
    d = decide(KedaSnapshot(10.0, two, 2, (ACTIVE, FAIL)), SETTINGS)
    assert cond(d.state, "Ready").reason == "PartialTriggerError"


def test_pause_force_and_cpu_only() -> None:
    paused = make_so(annotations={"autoscaling.keda.sh/paused": "true"})
    d = loop(paused, 0, ACTIVE, 10.0, KedaState())
    assert d.scale_to is None and d.state.condition("Paused").status == "True"
    pinned = make_so(annotations={"autoscaling.keda.sh/paused-replicas": "4"})
    assert loop(pinned, 2, ACTIVE, 10.0, KedaState()).scale_to == 4
    no_out = make_so(annotations={"autoscaling.keda.sh/paused-scale-out": "true"})
    assert loop(no_out, 0, ACTIVE, 10.0, KedaState()).scale_to is None
    forced = make_so(annotations={"autoscaling.keda.sh/force-activation": "true"})
    assert loop(forced, 0, IDLE, 10.0, KedaState()).scale_to == 1
    cpu = make_so(
        triggers=[{"type": "cpu", "metricType": "Utilization", "metadata": {"value": "50"}}]
    )
    assert loop(cpu, 0, None, 10.0, KedaState()).scale_to == 1  # cpu-only is always active


def test_formula_language() -> None:
    f = compile_formula("a > 2 ? (a + b) / 2 : max(a, b) ** 2", frozenset({"a", "b"}))
    assert f.evaluate({"a": 4.0, "b": 2.0}) == 3.0 and f.evaluate({"a": 1.0, "b": 3.0}) == 9.0
    assert compile_formula("(a ?? 10) - 1", frozenset({"a"})).evaluate({"a": None}) == 9.0
    assert compile_formula("-2 ^ 2", frozenset()).evaluate({}) == -4.0
    with pytest.raises(FormulaError, match="expected float64, but got bool"):
        compile_formula("a > 1", frozenset({"a"})).evaluate({"a": 2.0})
    with pytest.raises(FormulaError, match="unknown func nope"):
        compile_formula("nope(1)", frozenset())


def test_scaling_modifiers_activity_and_composite_metric() -> None:
    so = make_so(
        triggers=[
            {
                "type": "prometheus",
                "name": "a",
                "metadata": {"serverAddress": "s", "query": "a", "threshold": "1"},
            },
            {
                "type": "prometheus",
                "name": "b",
                "metadata": {"serverAddress": "s", "query": "b", "threshold": "1"},
            },
        ],
        advanced={"scalingModifiers": {"formula": "a - b", "target": "2", "activationTarget": "1"}},
    )
    polls = (ScalerPoll(5000, True), ScalerPoll(4500, True))
    d = decide(KedaSnapshot(0.0, so, 0, polls), SETTINGS)
    assert not d.active  # 0.5 is not above activationTarget 1, although both triggers are
    polls = (ScalerPoll(9000, True), ScalerPoll(1000, True))
    assert decide(KedaSnapshot(0.0, so, 0, polls), SETTINGS).active_triggers == (
        "ModifiersTrigger",
    )
    answer = external_metric(
        so,
        scalers_of(so),
        "composite-metric",
        {"s0-prometheus": polls[0], "s1-prometheus": polls[1]},
        KedaState(),
        1,
        1,
    )
    assert answer.values_milli == (8000,)


def test_fallback_lands_the_hpa_on_the_fallback_replicas() -> None:
    so = make_so(fallback={"failureThreshold": 2, "replicas": 6}, maxReplicaCount=20)
    scalers = scalers_of(so)
    hpa = hpa_for(so, scalers)
    state = KedaState()
    answers = []
    for _ in range(3):
        answer = external_metric(so, scalers, "s0-prometheus", {"s0-prometheus": FAIL}, state, 3, 3)
        state = answer.state
        answers.append(answer)
    assert answers[0].error == "metric:s0-prometheus encountered error"
    assert answers[1].error is not None and answers[2].values_milli == (30_000,)  # 5 x 6
    assert state.health["s0-prometheus"].failures == 3
    assert cond(state, "Fallback").short() == "Fallback=True/FallbackExists"
    metrics = MetricsSnapshot(external={"s0-prometheus": answers[2].values_milli or ()})
    pods = tuple(PodInfo(f"p{i}") for i in range(3))
    d = hpa_decide(HpaSnapshot(0.0, hpa, 3, 3, pods, metrics), HpaControllerSettings())
    assert d.desired_replicas == 6
    ok = external_metric(so, scalers, "s0-prometheus", {"s0-prometheus": ACTIVE}, state, 6, 6)
    assert ok.values_milli == (7000,) and ok.state.health["s0-prometheus"].failures == 0
    assert cond(ok.state, "Fallback").reason == "NoFallbackFound"


@pytest.mark.parametrize(
    ("behavior", "current", "want_replicas"),
    [
        ("static", 9, 4),
        ("currentReplicas", 9, 9),
        ("currentReplicasIfHigher", 2, 4),
        ("currentReplicasIfLower", 2, 2),
    ],
)
def test_fallback_behaviors(behavior: str, current: int, want_replicas: int) -> None:
    so = make_so(fallback={"failureThreshold": 0, "replicas": 4, "behavior": behavior})
    answer = external_metric(
        so, scalers_of(so), "s0-prometheus", {"s0-prometheus": FAIL}, KedaState(), current, current
    )
    assert answer.values_milli == (5000 * want_replicas,)


def test_fallback_for_value_metrics_divides_by_ready_pods() -> None:
    so = make_so(
        triggers=[
            {
                "type": "prometheus",
                "metricType": "Value",
                "metadata": {"serverAddress": "s", "query": "q", "threshold": "5"},
            }
        ],
        fallback={"failureThreshold": 0, "replicas": 6},
    )
    answer = external_metric(
        so, scalers_of(so), "s0-prometheus", {"s0-prometheus": FAIL}, KedaState(), 3, 3
    )
    assert answer.values_milli == (10_000,)  # 5 * 6 / 3 ready: ceil(10/5 * 3) = 6
    none_ready = external_metric(
        so, scalers_of(so), "s0-prometheus", {"s0-prometheus": FAIL}, KedaState(), 3, 0
    )
    assert none_ready.error == "metric:s0-prometheus encountered error"


def test_cached_metrics_answer_from_the_scale_loop() -> None:
    so = make_so(
        triggers=[
            {
                "type": "prometheus",
                "useCachedMetrics": True,
                "metadata": {"serverAddress": "s", "query": "q", "threshold": "5"},
            }
        ]
    )
    d = decide(KedaSnapshot(0.0, so, 1, (ScalerPoll(3000, True),)), SETTINGS)
    answer = external_metric(
        so,
        scalers_of(so),
        "s0-prometheus",
        {"s0-prometheus": ScalerPoll(9000, True)},
        d.state,
        1,
        1,
    )
    assert answer.values_milli == (3000,)
