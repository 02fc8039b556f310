"""The external scaler's metric against gpuplane's own HPA arithmetic, N and S in 1..100."""

from __future__ import annotations

import pytest

from gpuplane.autoscaler.hpa.controller import HpaSnapshot, decide
from gpuplane.autoscaler.hpa.metrics import MetricsSnapshot
from gpuplane.autoscaler.hpa.replica_calculator import Tolerances, external_per_pod_replicas
from gpuplane.autoscaler.hpa.settings import HpaControllerSettings
from gpuplane.autoscaler.hpa.spec import (
    Behavior,
    HpaSpec,
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    ScalingPolicy,
    ScalingPolicyType,
    ScalingRules,
)
from gpuplane.autoscaler.keda.replica_metric import TARGET_AVERAGE_VALUE, hpa_reaches, metric_for

COUNTS = range(1, 101)
NAME = "slo-replicas"


def _proposal(value: float, status: int, tol: Tolerances, to_milli: str) -> int:
    """What the HPA proposes, the value turned into milli-units as KEDA might (either way)."""
    milli = int(value * 1000) if to_milli == "truncate" else round(value * 1000)
    source = MetricsSnapshot(external={NAME: (milli,)})
    target = round(TARGET_AVERAGE_VALUE * 1000)
    return external_per_pod_replicas(status, target, NAME, None, tol, source).replicas


@pytest.mark.parametrize("to_milli", ["truncate", "round"])
def test_zero_tolerance_lands_on_every_count(to_milli: str) -> None:
    tol = Tolerances(0.0, 0.0)
    for desired in COUNTS:
        for current in COUNTS:
            got = _proposal(metric_for(desired, current), current, tol, to_milli)
            assert got == desired, (desired, current)


@pytest.mark.parametrize("to_milli", ["truncate", "round"])
def test_default_tolerance_lands_or_keeps_and_hpa_reaches_says_which(to_milli: str) -> None:
    tol = Tolerances()
    for desired in COUNTS:
        for current in COUNTS:
            got = _proposal(metric_for(desired, current), current, tol, to_milli)
            assert got in (desired, current)
            assert (got == desired) == hpa_reaches(desired, current, tol), (desired, current)


def test_default_tolerance_limits_are_the_documented_ones() -> None:
    tol = Tolerances()
    assert hpa_reaches(10, 9, tol) and not hpa_reaches(11, 10, tol)
    assert hpa_reaches(5, 6, tol) and not hpa_reaches(19, 20, tol)
    assert all(hpa_reaches(n, n, tol) for n in COUNTS)


def test_a_different_status_count_never_gives_a_third_count() -> None:
    tol = Tolerances()
    for desired in range(1, 31):
        for seen in range(1, 31):
            value = metric_for(desired, seen)
            for status in range(1, 31):
                assert _proposal(value, status, tol, "truncate") in (desired, status)


def _spec() -> HpaSpec:
    metric = MetricSpec(
        MetricSourceType.EXTERNAL,
        MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value_milli=1000),
        metric_name=NAME,
    )
    up = ScalingRules(
        stabilization_window_s=0,
        policies=(ScalingPolicy(ScalingPolicyType.PODS, 100, 15),),
        tolerance=0.0,
    )
    down = ScalingRules(
        stabilization_window_s=0,
        policies=(ScalingPolicy(ScalingPolicyType.PERCENT, 100, 15),),
        tolerance=0.0,
    )
    return HpaSpec(
        max_replicas=100, min_replicas=1, metrics=(metric,), behavior=Behavior.of(up, down)
    )


def test_the_documented_scaled_object_behavior_writes_the_count() -> None:
    """docs/live.md's ScaledObject: tolerance 0, no HPA stabilization, wide policies."""
    spec, settings = _spec(), HpaControllerSettings()
    for desired in COUNTS:
        for current in (1, 2, 9, 10, 11, 50, 99, 100):
            milli = int(metric_for(desired, current) * 1000)
            snap = HpaSnapshot(
                now_s=1000.0,
                spec=spec,
                spec_replicas=current,
                status_replicas=current,
                metrics=MetricsSnapshot(external={NAME: (milli,)}),
            )
            out = decide(snap, settings)
            assert out.desired_replicas == desired, (desired, current, out.error)


def test_metric_for_rejects_negative_counts() -> None:
    assert metric_for(0, 5) == 0.0
    with pytest.raises(ValueError):
        metric_for(-1, 2)
