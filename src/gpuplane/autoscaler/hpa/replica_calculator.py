"""Per-metric replica proposals, as ``pkg/controller/podautoscaler/replica_calculator.go`` does.

Every function returns a :class:`Proposal` or raises :class:`ReplicaCalcError` with the
controller's own error text. The arithmetic is the controller's, integer divisions included:

- Utilization: ``utilization = (Σusage · 100) // Σrequest`` over pods that have a request, then
  ``ratio = utilization / target`` (so 0.909 with 50 % used of a 55 % target);
- Pods metrics and Resource ``averageValue``: ``usage = Σvalue // n``, ``ratio = usage / target``;
- if no pod is missing a sample and no unready pod could hide load during a scale-up, the
  proposal is ``ceil(ratio · ready)`` unless the ratio is within tolerance; otherwise missing pods
  are assumed to use 100 % of their request (or exactly the target) on a scale-down and 0 on a
  scale-up, unready pods 0 on a scale-up, and the ratio is recomputed; if that flips direction or
  lands within tolerance nothing changes, else ``ceil(newRatio · #samples)``;
- Object/External ``Value``: ``ratio = value / target``, ``ceil(ratio · readyPods)``, or
  ``ceil(ratio)`` when the target currently has 0 replicas (scale from zero);
- Object/External ``AverageValue``: compared per replica of ``status.replicas``; the proposal is
  ``ceil(value / target)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuplane.autoscaler.hpa.golang import (
    INT32_MAX,
    INT64_MAX,
    ceil_int32,
    div_trunc,
    fdiv,
    to_int64,
)
from gpuplane.autoscaler.hpa.metrics import MetricsFetchError, MetricsSnapshot
from gpuplane.autoscaler.hpa.pods import (
    MissingRequestError,
    PodInfo,
    PodMetric,
    group_pods,
    pod_request,
    ready_pod_count,
)
from gpuplane.autoscaler.hpa.spec import ObjectReference, Selector


class ReplicaCalcError(Exception):
    """The controller could not compute a proposal for one metric (its message, verbatim)."""


@dataclass(frozen=True, slots=True)
class Tolerances:
    """Scale-down and scale-up tolerances: a ratio in ``[1-down, 1+up]`` changes nothing."""

    scale_down: float = 0.1
    scale_up: float = 0.1

    def is_within(self, ratio: float) -> bool:
        return (1.0 - self.scale_down) <= ratio <= (1.0 + self.scale_up)


@dataclass(frozen=True, slots=True)
class PodContext:
    """The pods the HPA's selector matches, and the clock and flags their grouping uses."""

    pods: tuple[PodInfo, ...]
    now_s: float
    cpu_init_s: float = 300.0
    readiness_delay_s: float = 30.0
    pod_level_resources: bool = True
    namespace: str = "default"


@dataclass(frozen=True, slots=True)
class Proposal:
    """A replica count and the current value the HPA reports for the metric (milli-units)."""

    replicas: int
    usage_milli: int
    utilization_percent: int | None = None


NO_PODS = "no pods returned by selector while calculating replica count"
NO_READY_METRICS = "did not receive metrics for targeted pods (pods might be unready)"


def _utilization(
    metrics: dict[str, PodMetric], requests: dict[str, int], target: int
) -> tuple[float, int, int]:
    """``GetResourceUtilizationRatio``: (ratio, utilization %, raw average usage)."""
    metrics_total = requests_total = entries = 0
    for pod, metric in metrics.items():
        request = requests.get(pod)
        if request is None:  # a sample of a pod the selector does not list
            continue
        metrics_total += metric.value_milli
        requests_total += request
        entries += 1
    if requests_total == 0:
        raise ReplicaCalcError("no metrics returned matched known pods")
    utilization = div_trunc(metrics_total * 100, requests_total)
    return float(utilization) / float(target), utilization, div_trunc(metrics_total, entries)


def _usage(metrics: dict[str, PodMetric], target: int) -> tuple[float, int]:
    """``GetMetricUsageRatio``: (ratio, average usage)."""
    usage = div_trunc(sum(m.value_milli for m in metrics.values()), len(metrics))
    return float(usage) / float(target), usage


def _final(current: int, ratio: float, new_ratio: float, n: int, tol: Tolerances) -> int:
    """The second pass: no change on a flip of direction or within tolerance."""
    if tol.is_within(new_ratio) or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return current
    replicas = ceil_int32(new_ratio * n)
    if (new_ratio < 1.0 and replicas > current) or (new_ratio > 1.0 and replicas < current):
        return current
    return replicas


def resource_replicas(
    current: int,
    target_utilization: int,
    resource: str,
    tol: Tolerances,
    ctx: PodContext,
    source: MetricsSnapshot,
    container: str = "",
) -> Proposal:
    """``GetResourceReplicas``: a Utilization target (percent of the pods' requests)."""
    try:
        metrics = source.resource_metric(resource, container)
    except MetricsFetchError as err:
        raise ReplicaCalcError(f"unable to get metrics for resource {resource}: {err}") from None
    if not ctx.pods:
        raise ReplicaCalcError(NO_PODS)
    groups = group_pods(
        ctx.pods, metrics, resource, ctx.now_s, ctx.cpu_init_s, ctx.readiness_delay_s
    )
    for name in groups.ignored | groups.unready:
        metrics.pop(name, None)
    if not metrics:
        raise ReplicaCalcError(NO_READY_METRICS)
    try:
        requests = {
            p.name: pod_request(p, container, resource, ctx.pod_level_resources) for p in ctx.pods
        }
    except MissingRequestError as err:
        raise ReplicaCalcError(str(err)) from None
    ratio, utilization, raw = _utilization(metrics, requests, target_utilization)

    scale_up_with_unready = bool(groups.unready) and ratio > 1.0
    if not scale_up_with_unready and not groups.missing:
        if tol.is_within(ratio):
            return Proposal(current, raw, utilization)
        return Proposal(ceil_int32(ratio * groups.num_ready), raw, utilization)

    if groups.missing:
        if ratio < 1.0:
            # Assume missing pods use all of their request (or the target, if it is above 100 %).
            fallback = max(100, target_utilization)
            for name in groups.missing:
                metrics[name] = PodMetric(div_trunc(requests[name] * fallback, 100))
        elif ratio > 1.0:
            for name in groups.missing:
                metrics[name] = PodMetric(0)
    if scale_up_with_unready:
        for name in groups.unready:
            metrics[name] = PodMetric(0)
    new_ratio, _, _ = _utilization(metrics, requests, target_utilization)
    return Proposal(_final(current, ratio, new_ratio, len(metrics), tol), raw, utilization)


def _plain_replicas(
    metrics: dict[str, PodMetric],
    current: int,
    target_usage: int,
    tol: Tolerances,
    ctx: PodContext,
    resource: str,
) -> Proposal:
    """``calcPlainMetricReplicas``: an AverageValue target over the pods' samples."""
    if not ctx.pods:
        raise ReplicaCalcError(NO_PODS)
    groups = group_pods(
        ctx.pods, metrics, resource, ctx.now_s, ctx.cpu_init_s, ctx.readiness_delay_s
    )
    for name in groups.ignored | groups.unready:
        metrics.pop(name, None)
    if not metrics:
        raise ReplicaCalcError(NO_READY_METRICS)
    ratio, usage = _usage(metrics, target_usage)

    scale_up_with_unready = bool(groups.unready) and ratio > 1.0
    if not scale_up_with_unready and not groups.missing:
        if tol.is_within(ratio):
            return Proposal(current, usage)
        return Proposal(ceil_int32(ratio * groups.num_ready), usage)

    if groups.missing:
        if ratio < 1.0:
            for name in groups.missing:
                metrics[name] = PodMetric(target_usage)
        elif ratio > 1.0:
            for name in groups.missing:
                metrics[name] = PodMetric(0)
    if scale_up_with_unready:
        for name in groups.unready:
            metrics[name] = PodMetric(0)
    new_ratio, _ = _usage(metrics, target_usage)
    return Proposal(_final(current, ratio, new_ratio, len(metrics), tol), usage)


def raw_resource_replicas(
    current: int,
    target_usage: int,
    resource: str,
    tol: Tolerances,
    ctx: PodContext,
    source: MetricsSnapshot,
    container: str = "",
) -> Proposal:
    """``GetRawResourceReplicas``: a Resource metric with an ``averageValue`` target."""
    try:
        metrics = source.resource_metric(resource, container)
    except MetricsFetchError as err:
        raise ReplicaCalcError(f"unable to get metrics for resource {resource}: {err}") from None
    return _plain_replicas(metrics, current, target_usage, tol, ctx, resource)


def metric_replicas(
    current: int,
    target_usage: int,
    metric_name: str,
    tol: Tolerances,
    ctx: PodContext,
    source: MetricsSnapshot,
) -> Proposal:
    """``GetMetricReplicas``: a Pods metric (readiness is not checked: it is not CPU)."""
    try:
        metrics = source.raw_metric(metric_name)
    except MetricsFetchError as err:
        raise ReplicaCalcError(f"unable to get metric {metric_name}: {err}") from None
    return _plain_replicas(metrics, current, target_usage, tol, ctx, "")


def _usage_ratio_replicas(current: int, ratio: float, tol: Tolerances, ctx: PodContext) -> int:
    """``getUsageRatioReplicaCount``: Value targets, and scale from zero when current is 0."""
    if current == 0:
        return ceil_int32(ratio)
    if tol.is_within(ratio):
        return current
    if not ctx.pods:
        raise ReplicaCalcError(f"unable to calculate ready pods: {NO_PODS}")
    wanted = ratio * ready_pod_count(ctx.pods)
    return INT32_MAX if wanted > INT32_MAX else ceil_int32(wanted)


def object_metric_replicas(
    current: int,
    target_usage: int,
    metric_name: str,
    described: ObjectReference,
    tol: Tolerances,
    ctx: PodContext,
    source: MetricsSnapshot,
) -> Proposal:
    """``GetObjectMetricReplicas``: an Object metric with a ``value`` target."""
    try:
        usage = source.object_metric(described.kind, described.name, metric_name).value_milli
    except MetricsFetchError as err:
        raise ReplicaCalcError(
            f"unable to get metric {metric_name}: {err} on {described.kind} "
            f"{ctx.namespace}/{described.name}"
        ) from None
    ratio = fdiv(float(usage), float(target_usage))
    return Proposal(_usage_ratio_replicas(current, ratio, tol, ctx), usage)


def _per_pod(
    status_replicas: int, usage: int, target: int, tol: Tolerances, external: bool
) -> Proposal:
    """The AverageValue arithmetic shared by Object and External metrics.

    The External variant caps the proposal at MaxInt32 and the reported value at MaxInt64; the
    Object variant converts without caps, as the controller does.
    """
    replicas = status_replicas
    ratio = fdiv(float(usage), float(target) * float(status_replicas))
    if not tol.is_within(ratio):
        wanted = math.ceil(float(usage) / float(target))
        replicas = INT32_MAX if external and wanted > INT32_MAX else ceil_int32(wanted)
    if external and float(usage) >= float(INT64_MAX):
        return Proposal(replicas, INT64_MAX)
    per_replica = fdiv(float(usage), float(status_replicas))
    reported = to_int64(math.ceil(per_replica) if math.isfinite(per_replica) else per_replica)
    return Proposal(replicas, reported)


def object_per_pod_replicas(
    status_replicas: int,
    target_average: int,
    metric_name: str,
    described: ObjectReference,
    tol: Tolerances,
    source: MetricsSnapshot,
    namespace: str = "default",
) -> Proposal:
    """``GetObjectPerPodMetricReplicas``: an Object metric with an ``averageValue`` target."""
    try:
        usage = source.object_metric(described.kind, described.name, metric_name).value_milli
    except MetricsFetchError as err:
        raise ReplicaCalcError(
            f"unable to get metric {metric_name}: {err} on {described.kind} "
            f"{namespace}/{described.name}"
        ) from None
    return _per_pod(status_replicas, usage, target_average, tol, external=False)


def format_selector(selector: Selector | None) -> str:
    """A ``*metav1.LabelSelector`` printed with ``%+v`` (its generated ``String`` method)."""
    if selector is None:
        return "nil"
    labels = "".join(f"{k}: {v}," for k, v in sorted(selector))
    return (
        f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
        "MatchExpressions:[]LabelSelectorRequirement{},}"
    )


def _external_values(
    source: MetricsSnapshot, metric_name: str, selector: Selector | None, namespace: str
) -> tuple[int, ...]:
    try:
        return source.external_metric(metric_name)
    except MetricsFetchError as err:
        raise ReplicaCalcError(
            f"unable to get external metric {namespace}/{metric_name}/"
            f"{format_selector(selector)}: {err}"
        ) from None


def external_metric_replicas(
    current: int,
    target_usage: int,
    metric_name: str,
    selector: Selector | None,
    tol: Tolerances,
    ctx: PodContext,
    source: MetricsSnapshot,
) -> Proposal:
    """``GetExternalMetricReplicas``: the sum of all series against a ``value`` target."""
    usage = 0
    for value in _external_values(source, metric_name, selector, ctx.namespace):
        if value > 0 and usage > INT64_MAX - value:
            usage = INT64_MAX
            break
        usage += value
    ratio = fdiv(float(usage), float(target_usage))
    return Proposal(_usage_ratio_replicas(current, ratio, tol, ctx), usage)


def external_per_pod_replicas(
    status_replicas: int,
    target_per_pod: int,
    metric_name: str,
    selector: Selector | None,
    tol: Tolerances,
    source: MetricsSnapshot,
    namespace: str = "default",
) -> Proposal:
    """``GetExternalPerPodMetricReplicas``: the sum against an ``averageValue`` target."""
    usage = 0
    for value in _external_values(source, metric_name, selector, namespace):
        usage += value
        if usage > INT64_MAX:  # Go's int64 wraps negative here; the controller caps it
            usage = INT64_MAX
            break
    return _per_pod(status_replicas, usage, target_per_pod, tol, external=True)
