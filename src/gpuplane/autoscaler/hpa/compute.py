"""One metric of an HPA spec -> a replica proposal (``horizontal.go``: ``computeReplicasForMetric``
and the ``computeStatusFor*Metric`` functions), with the controller's error chain.

When a metric cannot be computed, the controller builds a ScalingActive=False condition whose
message wraps the error at one level, and returns a more wrapped error to its caller; both texts
are reproduced so the conditions and events read like a real cluster's.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.autoscaler.hpa.metrics import MetricsSnapshot
from gpuplane.autoscaler.hpa.replica_calculator import (
    PodContext,
    Proposal,
    ReplicaCalcError,
    Tolerances,
    external_metric_replicas,
    external_per_pod_replicas,
    format_selector,
    metric_replicas,
    object_metric_replicas,
    object_per_pod_replicas,
    raw_resource_replicas,
    resource_replicas,
)
from gpuplane.autoscaler.hpa.spec import MetricSourceType, MetricSpec, MetricTargetType


@dataclass(frozen=True, slots=True)
class MetricStatus:
    """``MetricStatus``: the current value the HPA reports for one metric (milli-units)."""

    type: MetricSourceType
    name: str
    value_milli: int | None = None
    average_value_milli: int | None = None
    average_utilization: int | None = None


@dataclass(frozen=True, slots=True)
class MetricResult:
    replicas: int
    name: str
    status: MetricStatus


class MetricFailure(Exception):
    """A metric that could not be computed: the condition's reason and message, and the error."""

    def __init__(self, reason: str, condition_error: str, error: str) -> None:
        super().__init__(error)
        self.reason = reason
        self.condition_error = condition_error
        self.condition_message = (
            f"the HPA was unable to compute the replica count: {condition_error}"
        )
        self.error = error


@dataclass(frozen=True, slots=True)
class MetricInputs:
    spec_replicas: int
    status_replicas: int
    tolerances: Tolerances
    pods: PodContext
    source: MetricsSnapshot


def _object(m: MetricSpec, x: MetricInputs) -> MetricResult:
    obj = m.described_object
    target = m.target
    wrap = "failed to get object metric value: {}"
    reason = "FailedGetObjectMetric"
    if obj is None:
        raise MetricFailure(
            reason, "missing describedObject", wrap.format("missing describedObject")
        )
    if target.type is MetricTargetType.VALUE and target.value_milli is not None:
        try:
            p = object_metric_replicas(
                x.spec_replicas,
                target.value_milli,
                m.metric_name,
                obj,
                x.tolerances,
                x.pods,
                x.source,
            )
        except ReplicaCalcError as err:
            raise MetricFailure(reason, str(err), wrap.format(err)) from None
        status = MetricStatus(m.type, m.metric_name, value_milli=p.usage_milli)
        return MetricResult(p.replicas, f"{obj.kind} metric {m.metric_name}", status)
    if target.type is MetricTargetType.AVERAGE_VALUE and target.average_value_milli is not None:
        try:
            p = object_per_pod_replicas(
                x.status_replicas,
                target.average_value_milli,
                m.metric_name,
                obj,
                x.tolerances,
                x.source,
                x.pods.namespace,
            )
        except ReplicaCalcError as err:
            error = f"failed to get {m.metric_name} object metric: {err}"
            raise MetricFailure(reason, str(err), wrap.format(error)) from None
        status = MetricStatus(m.type, m.metric_name, average_value_milli=p.usage_milli)
        name = f"external metric {m.metric_name}({format_selector(m.selector)})"
        return MetricResult(p.replicas, name, status)
    msg = "invalid object metric source: neither a value target nor an average value target was set"
    raise MetricFailure(reason, msg, wrap.format(msg))


def _pods(m: MetricSpec, x: MetricInputs) -> MetricResult:
    target = m.target.average_value_milli
    if target is None:
        msg = "invalid pods metric source: no average value target was set"
        raise MetricFailure("FailedGetPodsMetric", msg, f"failed to get pods metric value: {msg}")
    try:
        p = metric_replicas(x.spec_replicas, target, m.metric_name, x.tolerances, x.pods, x.source)
    except ReplicaCalcError as err:
        raise MetricFailure(
            "FailedGetPodsMetric", str(err), f"failed to get pods metric value: {err}"
        ) from None
    status = MetricStatus(m.type, m.metric_name, average_value_milli=p.usage_milli)
    return MetricResult(p.replicas, f"pods metric {m.metric_name}", status)


def _resource(m: MetricSpec, x: MetricInputs) -> MetricResult:
    container = m.container if m.type is MetricSourceType.CONTAINER_RESOURCE else ""
    if container:
        reason, wrap = "FailedGetContainerResourceMetric", f"failed to get {container} container"
    else:
        reason, wrap = "FailedGetResourceMetric", f"failed to get {m.resource} resource"
    target = m.target
    p: Proposal
    if target.average_value_milli is not None:
        try:
            p = raw_resource_replicas(
                x.spec_replicas,
                target.average_value_milli,
                m.resource,
                x.tolerances,
                x.pods,
                x.source,
                container,
            )
        except ReplicaCalcError as err:
            error = f"failed to get {m.resource} usage: {err}"
            raise MetricFailure(reason, error, f"{wrap} metric value: {error}") from None
        status = MetricStatus(m.type, m.resource, average_value_milli=p.usage_milli)
        return MetricResult(p.replicas, f"{m.resource} resource", status)
    if target.average_utilization is None:
        error = (
            "invalid resource metric source: neither an average utilization target nor an "
            "average value (usage) target was set"
        )
        raise MetricFailure(reason, error, f"{wrap} metric value: {error}")
    try:
        p = resource_replicas(
            x.spec_replicas,
            target.average_utilization,
            m.resource,
            x.tolerances,
            x.pods,
            x.source,
            container,
        )
    except ReplicaCalcError as err:
        error = f"failed to get {m.resource} utilization: {err}"
        raise MetricFailure(reason, error, f"{wrap} metric value: {error}") from None
    kind = "container resource" if container else "resource"
    status = MetricStatus(
        m.type,
        m.resource,
        average_value_milli=p.usage_milli,
        average_utilization=p.utilization_percent,
    )
    return MetricResult(
        p.replicas, f"{m.resource} {kind} utilization (percentage of request)", status
    )


def _external(m: MetricSpec, x: MetricInputs) -> MetricResult:
    target = m.target
    reason = "FailedGetExternalMetric"
    wrap = f"failed to get {m.metric_name} external metric value: " + "{}"
    name = f"external metric {m.metric_name}({format_selector(m.selector)})"
    if target.average_value_milli is not None:
        try:
            p = external_per_pod_replicas(
                x.status_replicas,
                target.average_value_milli,
                m.metric_name,
                m.selector,
                x.tolerances,
                x.source,
                x.pods.namespace,
            )
        except ReplicaCalcError as err:
            error = f"failed to get {m.metric_name} external metric: {err}"
            raise MetricFailure(reason, str(err), wrap.format(error)) from None
        status = MetricStatus(m.type, m.metric_name, average_value_milli=p.usage_milli)
        return MetricResult(p.replicas, name, status)
    if target.value_milli is not None:
        try:
            p = external_metric_replicas(
                x.spec_replicas,
                target.value_milli,
                m.metric_name,
                m.selector,
                x.tolerances,
                x.pods,
                x.source,
            )
        except ReplicaCalcError as err:
            error = f"failed to get external metric {m.metric_name}: {err}"
            raise MetricFailure(reason, str(err), wrap.format(error)) from None
        status = MetricStatus(m.type, m.metric_name, value_milli=p.usage_milli)
        return MetricResult(p.replicas, name, status)
    msg = (
        "invalid external metric source: neither a value target nor an average value target was set"
    )
    raise MetricFailure(reason, msg, wrap.format(msg))


def compute_metric(m: MetricSpec, x: MetricInputs) -> MetricResult:
    """The proposal for one metric, or :class:`MetricFailure`."""
    if m.type is MetricSourceType.OBJECT:
        return _object(m, x)
    if m.type is MetricSourceType.PODS:
        return _pods(m, x)
    if m.type in (MetricSourceType.RESOURCE, MetricSourceType.CONTAINER_RESOURCE):
        return _resource(m, x)
    return _external(m, x)
