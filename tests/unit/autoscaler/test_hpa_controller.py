"""Whole HPA syncs: branches, metric choice, failures, conditions, and sequences of syncs."""

from __future__ import annotations

import pytest

from gpuplane.autoscaler.hpa.controller import HpaDecision, HpaSnapshot, decide
from gpuplane.autoscaler.hpa.metrics import MetricsApi, MetricsSnapshot
from gpuplane.autoscaler.hpa.pods import ContainerInfo, PodInfo, PodMetric
from gpuplane.autoscaler.hpa.settings import HpaControllerSettings
from gpuplane.autoscaler.hpa.spec import (
    Behavior,
    HpaSpec,
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    ScalingRules,
    cpu_utilization_metric,
)
from gpuplane.autoscaler.hpa.state import ConditionType, HpaState
from gpuplane.autoscaler.hpa.validation import validate_hpa_spec
from gpuplane.core.errors import InputError

SETTINGS = HpaControllerSettings()


def external(name: str, average_milli: int) -> MetricSpec:
    target = MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value_milli=average_milli)
    return MetricSpec(MetricSourceType.EXTERNAL, target, metric_name=name)


def snap(
    spec: HpaSpec,
    replicas: int,
    queue: int | None,
    *,
    now: float = 1000.0,
    state: HpaState | None = None,
    extra: dict[str, tuple[int, ...]] | None = None,
) -> HpaSnapshot:
    values: dict[str, tuple[int, ...]] = {} if queue is None else {"queue": (queue,)}
    values.update(extra or {})
    return HpaSnapshot(
        now,
        spec,
        replicas,
        replicas,
        metrics=MetricsSnapshot(external=values),
        state=state or HpaState(),
    )


def cond(decision: HpaDecision, kind: ConditionType) -> str:
    found = decision.condition(kind)
    return "" if found is None else found.short()


def test_zero_replicas_disable_scaling() -> None:
    d = decide(snap(HpaSpec(10, 1, (external("queue", 1000),)), 0, 50_000), SETTINGS)
    assert (d.desired_replicas, d.rescale) == (0, False)
    assert d.conditions[-1].short() == "ScalingActive=False/ScalingDisabled"


def test_scale_to_zero_and_back_with_min_zero_and_an_external_metric() -> None:
    spec = HpaSpec(10, 0, (external("queue", 1000),))
    d = decide(snap(spec, 0, 3500), SETTINGS)
    assert d.desired_replicas == 4 and d.rescale


def test_outside_min_max_goes_straight_to_the_bound() -> None:
    spec = HpaSpec(5, 3, (external("queue", 1000),))
    high = decide(snap(spec, 9, None), SETTINGS)
    assert high.desired_replicas == 5 and high.events[-1].message.endswith(
        "Current number of replicas above Spec.MaxReplicas"
    )
    low = decide(snap(spec, 1, None), SETTINGS)
    assert low.desired_replicas == 3
    assert [c.short() for c in low.conditions] == ["AbleToScale=True/SucceededRescale"]


def test_scale_up_names_the_metric_and_sets_conditions() -> None:
    spec = HpaSpec(20, 1, (external("queue", 1000),))
    d = decide(snap(spec, 2, 6000), SETTINGS)
    assert d.desired_replicas == 4  # legacy limit max(2 * 2, 4)
    assert cond(d, ConditionType.SCALING_LIMITED) == "ScalingLimited=True/ScaleUpLimit"
    assert cond(d, ConditionType.SCALING_ACTIVE) == "ScalingActive=True/ValidMetricFound"
    assert cond(d, ConditionType.ABLE_TO_SCALE) == "AbleToScale=True/SucceededRescale"
    assert d.events[-1].message == "New size: 4; reason: external metric queue(nil) above target"


def test_the_largest_proposal_wins() -> None:
    spec = HpaSpec(20, 1, (external("queue", 1000), external("lag", 1000)))
    d = decide(snap(spec, 4, 2000, extra={"lag": (7000,)}), SETTINGS)
    assert d.desired_replicas == 7


def test_an_invalid_metric_is_skipped_unless_it_would_hide_a_scale_down() -> None:
    spec = HpaSpec(20, 1, (external("queue", 1000), external("missing", 1000)))
    up = decide(snap(spec, 4, 6000), SETTINGS)
    assert up.desired_replicas == 6 and up.error is not None
    assert up.error.startswith("invalid metrics (1 invalid out of 2), first error is:")
    down = decide(snap(spec, 4, 1000), SETTINGS)
    # No rescale; status.desiredReplicas keeps its previous value (0 for a new HPA).
    assert not down.rescale and down.desired_replicas == 0
    assert cond(down, ConditionType.SCALING_ACTIVE) == "ScalingActive=False/FailedGetExternalMetric"
    assert down.error is not None and down.error.startswith(
        "failed to compute desired number of replicas based on listed metrics for "
        "Deployment/default/app: invalid metrics (1 invalid out of 2)"
    )


def test_all_metrics_failing_keeps_the_previous_desired_count() -> None:
    spec = HpaSpec(20, 1, (cpu_utilization_metric(60),))
    outage = MetricsSnapshot(outages={MetricsApi.RESOURCE: "metrics-server down"})
    d = decide(
        HpaSnapshot(0.0, spec, 3, 3, metrics=outage, state=HpaState(desired_replicas=3)), SETTINGS
    )
    assert not d.rescale and d.desired_replicas == 3
    active = d.condition(ConditionType.SCALING_ACTIVE)
    assert active is not None and active.reason == "FailedGetResourceMetric"
    assert (
        "unable to fetch metrics from resource metrics API: metrics-server down" in active.message
    )


def test_cpu_utilization_end_to_end() -> None:
    pods = tuple(
        PodInfo(f"p{i}", containers=(ContainerInfo("c", (("cpu", 1000),)),)) for i in range(3)
    )
    samples = {p.name: PodMetric(900, 990.0, 60.0) for p in pods}
    spec = HpaSpec(10, 1, (cpu_utilization_metric(60),))
    d = decide(
        HpaSnapshot(1000.0, spec, 3, 3, pods, MetricsSnapshot(resource={"cpu": samples})),
        SETTINGS,
    )
    assert d.desired_replicas == 5  # 90 % / 60 % = 1.5 -> ceil(4.5)
    assert d.metric_statuses[0].average_utilization == 90


def run_syncs(spec: HpaSpec, loads: list[int], replicas: int) -> list[int]:
    """Sync every 15 s, applying each decision as the twin would."""
    state = HpaState()
    counts = []
    for i, load in enumerate(loads):
        d = decide(snap(spec, replicas, load, now=15.0 * i, state=state), SETTINGS)
        state = d.state
        replicas = d.desired_replicas
        counts.append(replicas)
    return counts


def test_legacy_downscale_waits_for_the_five_minute_window() -> None:
    spec = HpaSpec(20, 1, (external("queue", 1000),))
    loads = [8000] * 2 + [1000] * 25
    counts = run_syncs(spec, loads, 8)
    assert counts[:2] == [8, 8]
    # the 8-replica recommendation made at t=15 s expires after 300 s: first at t=330 s
    assert all(c == 8 for c in counts[2:22]) and counts[22] == 1


def test_behavior_rate_limits_and_stabilization_over_time() -> None:
    behavior = Behavior.of(None, ScalingRules(stabilization_window_s=60))
    spec = HpaSpec(100, 1, (external("queue", 1000),), behavior=behavior)
    counts = run_syncs(spec, [40_000] * 4 + [1000] * 8, 1)
    # Up: +4 pods or +100 % per 15 s (max), from 1: 5, 10, 20, 40.
    assert counts[:4] == [5, 10, 20, 40]
    # Down held by the 60 s window: the last high recommendation (t=45 s) stops counting once
    # it is no longer strictly newer than the cutoff, at t=105 s; then all at once (100 %/15 s).
    assert counts[4:7] == [40, 40, 40] and counts[7:] == [1] * 5


def test_configurable_tolerance_follows_the_feature_gate() -> None:
    behavior = Behavior.of(ScalingRules(tolerance=0.5), None)
    spec = HpaSpec(20, 1, (external("queue", 1000),), behavior=behavior)
    assert decide(snap(spec, 4, 5600), SETTINGS).desired_replicas == 4  # ratio 1.4 <= 1.5
    off = SETTINGS.model_copy(update={"configurable_tolerance": False})
    assert decide(snap(spec, 4, 5600), off).desired_replicas == 6


def test_spec_validation_and_the_scale_to_zero_gate() -> None:
    zero = HpaSpec(5, 0, (external("queue", 1000),))
    with pytest.raises(InputError, match="minReplicas 0 must be greater than or equal to 1"):
        validate_hpa_spec(zero, SETTINGS)
    gate = SETTINGS.model_copy(update={"scale_to_zero": True})
    assert validate_hpa_spec(zero, gate) is zero
    with pytest.raises(InputError, match="at least one Object or External metric"):
        validate_hpa_spec(HpaSpec(5, 0, (cpu_utilization_metric(50),)), gate)
    with pytest.raises(InputError, match="must be greater than or equal to minReplicas 3"):
        validate_hpa_spec(HpaSpec(2, 3), SETTINGS)
    with pytest.raises(InputError, match="must be positive"):
        validate_hpa_spec(HpaSpec(5, 1, (external("queue", 0),)), SETTINGS)
    pods_value = MetricSpec(
        MetricSourceType.PODS, MetricTarget(MetricTargetType.VALUE, value_milli=5), metric_name="x"
    )
    with pytest.raises(InputError, match="not allowed for Pods metrics"):
        validate_hpa_spec(HpaSpec(5, 1, (pods_value,)), SETTINGS)
