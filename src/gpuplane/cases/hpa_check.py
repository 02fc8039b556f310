"""``gpuplane autoscale hpa-check``: one case of shared/reference/hpa-examples.json in, the
computed values out, under the case's ``expected*`` key names.

A case names its family (the list it comes from); each family exercises one part of the
controller through the same functions the twin's HPA uses:

- ``replica_calc_cases``: the replica calculator for one metric (``expected_replicas`` and the
  reported usage, or ``expected_error_contains`` with the controller's error); optional
  ``extra_metrics_for_unknown_pods_milli`` are samples of pods the pod list lacks;
- ``behavior_rate_cases`` / ``limit_cases``: scaling policies and their limits;
- ``stabilization_cases`` / ``legacy_stabilization_cases``: recommendation windows;
- ``legacy_rules_cases``: the clamp without a behavior;
- ``controller_cases``: a whole sync (``controller.decide``) with one CPU Utilization metric,
  fed by the optional per-pod ``pod_cpu_usage_milli`` / ``pod_cpu_request_milli``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from gpuplane.api.pod_phase import PodPhase
from gpuplane.api.resources import CPU
from gpuplane.autoscaler.hpa.controller import HpaSnapshot, decide
from gpuplane.autoscaler.hpa.metrics import MetricsSnapshot, ObjectMetricValue
from gpuplane.autoscaler.hpa.normalize import (
    convert_with_behavior_rate,
    convert_with_rules,
    scale_down_limit,
    scale_up_limit,
    stabilize_legacy,
    stabilize_with_behaviors,
)
from gpuplane.autoscaler.hpa.pods import ConditionStatus, ContainerInfo, PodInfo, PodMetric
from gpuplane.autoscaler.hpa.replica_calculator import (
    PodContext,
    Proposal,
    ReplicaCalcError,
    external_metric_replicas,
    external_per_pod_replicas,
    metric_replicas,
    object_metric_replicas,
    object_per_pod_replicas,
    raw_resource_replicas,
    resource_replicas,
)
from gpuplane.autoscaler.hpa.settings import HpaControllerSettings
from gpuplane.autoscaler.hpa.spec import (
    Behavior,
    HpaSpec,
    ObjectReference,
    cpu_utilization_metric,
)
from gpuplane.autoscaler.hpa.state import HpaState
from gpuplane.cases.case_json import parse_case_json
from gpuplane.cases.hpa_check_models import (
    BehaviorRateCase,
    ControllerCase,
    LegacyRulesCase,
    LegacyStabilizationCase,
    LimitCase,
    ReplicaCalcCase,
    StabilizationCase,
)
from gpuplane.core.errors import InputError, Location
from gpuplane.core.validation import validate_model

# replica_calculator_test.go runs with a 2 minute CPU initialization period and a 10 s initial
# readiness delay; a "hot" pod started 1 minute ago, a "cool" one long before.
TEST_CPU_INIT_S = 120.0
TEST_READINESS_DELAY_S = 10.0
NOW_S = 10_000.0
HOT_AGE_S = 60.0
COOL_AGE_S = 600.0
METRIC_WINDOW_S = 60.0
OBJECT = ObjectReference("Deployment", "some-deployment", "apps/v1")


def _pods_and_samples(case: ReplicaCalcCase) -> tuple[tuple[PodInfo, ...], dict[str, PodMetric]]:
    pods: list[PodInfo] = []
    samples: dict[str, PodMetric] = {}
    for p in case.pods:
        start = NOW_S - (HOT_AGE_S if p.start == "hot" else COOL_AGE_S)
        requests = () if p.request_milli is None else ((case.resource, p.request_milli),)
        pods.append(
            PodInfo(
                name=p.name,
                phase=PodPhase(p.phase),
                ready=ConditionStatus.TRUE if p.ready else ConditionStatus.FALSE,
                ready_transition_s=start,
                start_s=start,
                deleted=p.deleted,
                containers=(ContainerInfo("container", requests),),
            )
        )
        if p.usage_milli is not None:
            # A hot pod's sample was taken when it started: its window overlaps start-up.
            stamp = start if p.start == "hot" else NOW_S
            samples[p.name] = PodMetric(p.usage_milli, stamp, METRIC_WINDOW_S)
    known = {p.name for p in pods}
    for i, value in enumerate(case.extra_metrics_for_unknown_pods_milli):
        samples[_unknown_name(i, known)] = PodMetric(value, NOW_S, METRIC_WINDOW_S)
    return tuple(pods), samples


def _unknown_name(i: int, known: set[str]) -> str:
    """A pod name the case's pod list does not hold (the metrics API's sample of a pod the
    informer does not know, e.g. one just deleted)."""
    name = f"unknown-pod-{i}"
    while name in known:
        name += "-x"
    return name


def _replica_calc(case: ReplicaCalcCase) -> Proposal:
    pods, samples = _pods_and_samples(case)
    ctx = PodContext(pods, NOW_S, TEST_CPU_INIT_S, TEST_READINESS_DELAY_S)
    tol = case.tolerance.to_tolerances()
    current = case.current_replicas
    status = current if case.status_replicas is None else case.status_replicas
    values = tuple(case.metric_values_milli)
    kind = case.kind
    if kind == "resource_utilization":
        source = MetricsSnapshot(resource={case.resource: samples})
        return resource_replicas(current, case.target, case.resource, tol, ctx, source)
    if kind == "resource_average_value":
        source = MetricsSnapshot(resource={case.resource: samples})
        return raw_resource_replicas(current, case.target, case.resource, tol, ctx, source)
    if kind == "pods_metric":
        source = MetricsSnapshot(pods={"qps": samples})
        return metric_replicas(current, case.target, "qps", tol, ctx, source)
    if kind in ("object_value", "object_average_value"):
        objects = {}
        if values:
            objects[(OBJECT.kind, OBJECT.name, "qps")] = ObjectMetricValue(values[0], NOW_S)
        source = MetricsSnapshot(objects=objects)
        if kind == "object_value":
            return object_metric_replicas(current, case.target, "qps", OBJECT, tol, ctx, source)
        return object_per_pod_replicas(status, case.target, "qps", OBJECT, tol, source)
    source = MetricsSnapshot(external={"qps": values})
    if kind == "external_value":
        return external_metric_replicas(current, case.target, "qps", None, tol, ctx, source)
    return external_per_pod_replicas(status, case.target, "qps", None, tol, source)


def run_replica_calc(case: ReplicaCalcCase) -> dict[str, Any]:
    try:
        p = _replica_calc(case)
    except ReplicaCalcError as err:
        return {"expected_error_contains": str(err)}
    if case.kind == "resource_utilization":
        return {
            "expected_replicas": p.replicas,
            "expected_utilization_percent": p.utilization_percent,
            "expected_raw_average_milli": p.usage_milli,
        }
    return {"expected_replicas": p.replicas, "expected_usage_milli": p.usage_milli}


def run_behavior_rate(case: BehaviorRateCase) -> dict[str, Any]:
    behavior = Behavior.of(
        None if case.scale_up_rules is None else case.scale_up_rules.to_rules(),
        None if case.scale_down_rules is None else case.scale_down_rules.to_rules(),
    )
    limited = convert_with_behavior_rate(
        case.current_replicas,
        case.desired_replicas,
        case.min_replicas,
        case.max_replicas,
        behavior,
        tuple(e.at(NOW_S) for e in case.scale_up_events),
        tuple(e.at(NOW_S) for e in case.scale_down_events),
        NOW_S,
    )
    return {"expected_replicas": limited.replicas, "expected_condition": limited.reason}


def run_limit(case: LimitCase) -> dict[str, Any]:
    up_fn = case.function in ("scale_up_limit", "calculateScaleUpLimitWithScalingRules")
    own = tuple(e.at(NOW_S) for e in case.events)
    up = tuple(e.at(NOW_S) for e in case.scale_up_events) + (own if up_fn else ())
    down = tuple(e.at(NOW_S) for e in case.scale_down_events) + (() if up_fn else own)
    if up_fn:
        rules = Behavior.of(None if case.rules is None else case.rules.to_rules(), None)
        value = scale_up_limit(case.current_replicas, up, down, rules.scale_up, NOW_S)
    else:
        rules = Behavior.of(None, None if case.rules is None else case.rules.to_rules())
        value = scale_down_limit(case.current_replicas, up, down, rules.scale_down, NOW_S)
    return {"expected": value}


def run_stabilization(case: StabilizationCase) -> dict[str, Any]:
    replicas, _, _, recs = stabilize_with_behaviors(
        tuple(r.at(NOW_S) for r in case.recommendations),
        case.desired_replicas,
        case.current_replicas,
        float(case.scale_up_window_seconds),
        float(case.scale_down_window_seconds),
        NOW_S,
    )
    return {
        "expected_replicas": replicas,
        "expected_stored_recommendations": [r.replicas for r in recs],
    }


def run_legacy_stabilization(case: LegacyStabilizationCase) -> dict[str, Any]:
    replicas, recs = stabilize_legacy(
        tuple(r.at(NOW_S) for r in case.recommendations),
        case.desired_replicas,
        NOW_S,
        float(case.downscale_stabilization_window_seconds),
    )
    return {"expected_replicas": replicas, "expected_log_length": len(recs)}


def run_legacy_rules(case: LegacyRulesCase) -> dict[str, Any]:
    limited = convert_with_rules(
        case.current_replicas, case.desired_replicas, case.min_replicas, case.max_replicas
    )
    return {"expected_replicas": limited.replicas, "expected_condition": limited.reason}


# horizontal_test.go names its pods test-pod-<i> and gives each 1 CPU unless told otherwise.
CONTROLLER_POD_PREFIX = "test-pod"
CONTROLLER_DEFAULT_REQUEST_MILLI = 1000


def _controller_pods(
    case: ControllerCase, status_replicas: int
) -> tuple[tuple[PodInfo, ...], MetricsSnapshot]:
    """The pods and CPU samples of a controller case (see ``ControllerCase``); none when the
    case gives no per-pod input."""
    usage, requests = case.pod_cpu_usage_milli, case.pod_cpu_request_milli
    if usage is None and requests is None:
        return (), MetricsSnapshot()
    if requests is None:
        requests = [CONTROLLER_DEFAULT_REQUEST_MILLI] * status_replicas
    start = NOW_S - COOL_AGE_S
    pods = tuple(
        PodInfo(
            name=f"{CONTROLLER_POD_PREFIX}-{i}",
            ready_transition_s=start,
            start_s=start,
            containers=(ContainerInfo("container", () if r is None else ((CPU, r),)),),
        )
        for i, r in enumerate(requests)
    )
    samples = {
        f"{CONTROLLER_POD_PREFIX}-{i}": PodMetric(value, NOW_S, METRIC_WINDOW_S)
        for i, value in enumerate(usage or ())
        if value is not None
    }
    return pods, MetricsSnapshot(resource={CPU: samples} if samples else {})


def run_controller(case: ControllerCase) -> dict[str, Any]:
    spec = HpaSpec(
        max_replicas=case.max_replicas,
        min_replicas=case.min_replicas,
        metrics=(cpu_utilization_metric(case.cpu_target_utilization),),
    )
    status = case.spec_replicas if case.status_replicas is None else case.status_replicas
    pods, metrics = _controller_pods(case, status)
    # The harness's HPA reports status.desiredReplicas = spec replicas from before this sync; a
    # sync whose metrics all fail leaves it so.
    state = HpaState(desired_replicas=case.spec_replicas)
    snapshot = HpaSnapshot(NOW_S, spec, case.spec_replicas, status, pods, metrics, state)
    decision = decide(snapshot, HpaControllerSettings())
    last = decision.conditions[-1]
    return {
        "expected_desired_replicas": decision.desired_replicas,
        "expected_condition": last.short(),
    }


_Runner = Callable[[Any], dict[str, Any]]
FAMILIES: dict[str, tuple[type[BaseModel], _Runner]] = {
    "replica_calc_cases": (ReplicaCalcCase, run_replica_calc),
    "behavior_rate_cases": (BehaviorRateCase, run_behavior_rate),
    "limit_cases": (LimitCase, run_limit),
    "stabilization_cases": (StabilizationCase, run_stabilization),
    "legacy_stabilization_cases": (LegacyStabilizationCase, run_legacy_stabilization),
    "legacy_rules_cases": (LegacyRulesCase, run_legacy_rules),
    "controller_cases": (ControllerCase, run_controller),
}


def run_case(data: object, source: str = "<stdin>") -> dict[str, Any]:
    """Validate one case (``family`` picks the schema) and compute its answer."""
    if not isinstance(data, dict):
        raise InputError(
            f"got {type(data).__name__}",
            expected="one JSON object (a case with a 'family' key)",
            location=Location(source=source),
        )
    family = data.get("family")
    if not isinstance(family, str) or family not in FAMILIES:
        raise InputError(
            "missing 'family'" if family is None else f"unknown family {family!r}",
            expected=f"one of {', '.join(FAMILIES)}",
            location=Location(source=source, field="family"),
        )
    model, runner = FAMILIES[str(family)]
    # A case may still carry its expected answers; they are not inputs.
    inputs = {k: v for k, v in data.items() if not k.startswith("expected")}
    try:
        case = validate_model(model, inputs)
    except InputError as err:
        raise err.located(source) from None
    return runner(case)


def run_json(text: str, source: str = "<stdin>") -> dict[str, Any]:
    data = parse_case_json(text, source)
    return run_case(data, source)
