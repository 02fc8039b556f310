"""KEDA scalers: each trigger becomes one metric of the HPA KEDA creates, and is polled for its
value and activity (``pkg/scalers/scaler.go``, ``prometheus_scaler.go``,
``cpu_memory_scaler.go``).

- ``prometheus``: an External metric named ``s<index>-prometheus`` whose target is the
  ``threshold`` (``averageValue`` for metricType AverageValue, the default, or ``value`` for
  Value), in milli-units truncated like ``GetMetricTargetMili``;
- ``cpu`` / ``memory``: a Resource metric (``Utilization`` percent or ``AverageValue``) the HPA
  reads from metrics-server; KEDA never polls them, and they alone cannot activate from zero.

Other KEDA scalers are not modelled; a trigger of another type is an error that lists these.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Protocol

from gpuplane.autoscaler.hpa.spec import (
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
)
from gpuplane.autoscaler.keda.model import TriggerIn
from gpuplane.autoscaler.keda.prometheus_scaler import (
    PrometheusMetadata,
    PromQueryApi,
    QueryAnswer,
    ScalerError,
    describe,
    metric_in_milli,
    parse_prometheus_metadata,
    read_answer,
)
from gpuplane.core.errors import InputError, Location

SUPPORTED_TYPES = ("prometheus", "cpu", "memory")
UTILIZATION_UNSUPPORTED = (
    "'Utilization' metric type is unsupported for external metrics, allowed values are "
    "'Value' or 'AverageValue'"
)
OWNER_LABEL = "scaledobject.keda.sh/name"

_QUANTITY = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(m|k|M|G|T|P|Ki|Mi|Gi|Ti|Pi)?")
_SCALE = {
    None: 1.0,
    "m": 1e-3,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "Ki": 2.0**10,
    "Mi": 2.0**20,
    "Gi": 2.0**30,
    "Ti": 2.0**40,
    "Pi": 2.0**50,
}


def quantity_milli(text: str) -> int | None:
    """A Kubernetes quantity (``500m``, ``2``, ``512Mi``) in milli-units, rounded up."""
    m = _QUANTITY.fullmatch(text.strip())
    if m is None:
        return None
    return math.ceil(float(m.group(1)) * _SCALE[m.group(2)] * 1000 - 1e-9)


def target_milli(threshold: float) -> int:
    """``GetMetricTargetMili``: ``int64(threshold * 1000)``; NaN, Inf or negative give 0."""
    if not math.isfinite(threshold) or threshold < 0:
        return 0
    return math.trunc(threshold * 1000)


@dataclass(frozen=True, slots=True)
class ScalerPoll:
    """One poll of one trigger: the metric in milli-units and whether the trigger is active,
    or the error it failed with."""

    value_milli: int | None
    active: bool
    error: str | None = None


class Scaler(Protocol):
    """A trigger's scaler. ``metric_spec`` is the metric the HPA gets; ``poll`` is one call of
    ``GetMetricsAndActivity`` (only for External metrics)."""

    @property
    def index(self) -> int: ...

    @property
    def trigger_name(self) -> str: ...

    def metric_spec(self, owner: str) -> MetricSpec: ...

    def poll(self, t_s: float) -> ScalerPoll: ...


def _target(kind: str, milli: int) -> MetricTarget:
    if kind == "Value":
        return MetricTarget(MetricTargetType.VALUE, value_milli=milli)
    return MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value_milli=milli)


@dataclass(frozen=True)
class PrometheusScaler:
    index: int
    trigger_name: str
    metric_type: str
    meta: PrometheusMetadata
    api: PromQueryApi

    def metric_spec(self, owner: str) -> MetricSpec:
        return MetricSpec(
            MetricSourceType.EXTERNAL,
            _target(self.metric_type, target_milli(self.meta.threshold)),
            metric_name=f"s{self.index}-prometheus",  # GenerateMetricNameWithIndex
            selector=((OWNER_LABEL, owner),),
        )

    def poll(self, t_s: float) -> ScalerPoll:
        """``GetMetricsAndActivity``: any failure, the server's or the client's, is the poll's
        error (KEDA's scaler returns it; the scale loop and the fallback deal with it), never an
        exception out of the poll."""
        try:
            value = read_answer(self.meta, self.api.query(self.meta.query, t_s))
        except ScalerError as err:
            return ScalerPoll(None, False, str(err))
        except Exception as err:  # the HTTP client's failure, in KEDA; here any bug below
            return ScalerPoll(None, False, f"error executing prometheus query: {describe(err)}")
        return ScalerPoll(metric_in_milli(value), value > self.meta.activation_threshold)


@dataclass(frozen=True)
class ResourceScaler:
    """``cpu``/``memory``: a Resource (or ContainerResource) metric; nothing to poll."""

    index: int
    trigger_name: str
    resource: str
    target: MetricTarget
    container: str = ""

    def metric_spec(self, owner: str) -> MetricSpec:
        kind = MetricSourceType.CONTAINER_RESOURCE if self.container else MetricSourceType.RESOURCE
        return MetricSpec(kind, self.target, resource=self.resource, container=self.container)

    def poll(self, t_s: float) -> ScalerPoll:
        return ScalerPoll(None, False)


def _resource_target(trigger: TriggerIn, field: str) -> MetricTarget:
    kind = trigger.metricType or trigger.metadata.get("type", "")
    if not kind:
        raise InputError(
            "no type given in neither trigger.metadata.type or trigger.metricType",
            expected="metricType: Utilization or AverageValue",
            location=Location(field=f"{field}.metricType"),
        )
    if kind not in ("Utilization", "AverageValue"):
        raise InputError(
            f"unknown metric type: {kind}, allowed values are 'Utilization' or 'AverageValue'",
            location=Location(field=f"{field}.metricType"),
        )
    raw = trigger.metadata.get("value", "")
    if kind == "Utilization":
        if not raw.isdigit() or int(raw) == 0:
            raise InputError(
                f"value {raw!r} is not a utilization percentage",
                expected='a whole percent > 0 as a string, e.g. "60"',
                location=Location(field=f"{field}.metadata.value"),
            )
        return MetricTarget(MetricTargetType.UTILIZATION, average_utilization=int(raw))
    milli = quantity_milli(raw)
    if milli is None or milli <= 0:
        raise InputError(
            f"value {raw!r} is not a positive quantity",
            expected='a quantity such as "500m" or "512Mi"',
            location=Location(field=f"{field}.metadata.value"),
        )
    return MetricTarget(MetricTargetType.AVERAGE_VALUE, average_value_milli=milli)


def external_metric_name(trigger: TriggerIn, index: int) -> str | None:
    """The External metric name of trigger ``index`` (None for cpu/memory)."""
    return f"s{index}-{trigger.type}" if trigger.type not in ("cpu", "memory") else None


def build_scaler(trigger: TriggerIn, index: int, api: PromQueryApi | None) -> Scaler:
    """The scaler of ``spec.triggers[index]``; InputError for a trigger KEDA would reject.

    ``api`` may be None to only validate the trigger (the Prometheus scaler then has no server
    to ask and fails every poll).
    """
    field = f"spec.triggers[{index}]"
    name = trigger.name or f"{trigger.type}Scaler"
    if trigger.type == "prometheus":
        if trigger.metricType == "Utilization":
            raise InputError(
                f"error getting scaler metric type: {UTILIZATION_UNSUPPORTED}",
                location=Location(field=f"{field}.metricType"),
            )
        meta = parse_prometheus_metadata(trigger.metadata, f"{field}.metadata")
        return PrometheusScaler(index, name, trigger.target_type(), meta, api or _NoServer())
    if trigger.type in ("cpu", "memory"):
        target = _resource_target(trigger, field)
        container = trigger.metadata.get("containerName", "")
        return ResourceScaler(index, name, trigger.type, target, container)
    raise InputError(
        f"no scaler found for type: {trigger.type}",
        expected=f"a trigger type gpuplane models: {', '.join(SUPPORTED_TYPES)}",
        location=Location(field=f"{field}.type"),
    )


class _NoServer:
    """Stands in for the server when a ScaledObject is only being validated."""

    def query(self, query: str, t_s: float) -> QueryAnswer:
        return QueryAnswer(status=503, error="no Prometheus server configured")
