"""The HorizontalPodAutoscaler spec (``autoscaling/v2``) as frozen values, with the API defaults.

Quantities are kept in thousandths ("milli"), because that is the precision the controller reads
them at (``Quantity.MilliValue``): a target of ``500m`` requests-per-second is ``500``, a target of
``2`` is ``2000``. Defaults follow ``pkg/apis/autoscaling/v2/defaults.go``:

- ``minReplicas`` defaults to 1; no metrics means one CPU Utilization metric at 80 %;
- ``behavior`` stays absent unless given. When it is given, every missing field of each direction
  is copied from the default rules: scale up = no stabilization, ``selectPolicy: Max``, policies
  ``Pods 4 / 15s`` and ``Percent 100 / 15s``; scale down = stabilization left unset (the
  controller then uses its ``--horizontal-pod-autoscaler-downscale-stabilization`` window, 5 min),
  ``selectPolicy: Max``, policy ``Percent 100 / 15s``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum

from gpuplane.api.resources import CPU

DEFAULT_MIN_REPLICAS = 1
DEFAULT_CPU_UTILIZATION = 80
SCALE_UP_PERIOD_S = 15
SCALE_DOWN_PERIOD_S = 15


class MetricSourceType(StrEnum):
    OBJECT = "Object"
    PODS = "Pods"
    RESOURCE = "Resource"
    CONTAINER_RESOURCE = "ContainerResource"
    EXTERNAL = "External"


class MetricTargetType(StrEnum):
    UTILIZATION = "Utilization"
    VALUE = "Value"
    AVERAGE_VALUE = "AverageValue"


@dataclass(frozen=True, slots=True)
class MetricTarget:
    """``MetricTarget``: one of value / averageValue (milli) / averageUtilization (percent)."""

    type: MetricTargetType
    value_milli: int | None = None
    average_value_milli: int | None = None
    average_utilization: int | None = None


@dataclass(frozen=True, slots=True)
class ObjectReference:
    """``CrossVersionObjectReference``: the object an Object metric describes, or the target."""

    kind: str
    name: str
    api_version: str = ""


Selector = tuple[tuple[str, str], ...]
"""A metric selector's ``matchLabels``, sorted by key."""


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One entry of ``spec.metrics``.

    ``metric_name`` is the metric's name for Pods, Object and External sources; ``resource`` the
    resource name (``cpu``, ``memory``) for Resource and ContainerResource; ``container`` the
    container of a ContainerResource metric.
    """

    type: MetricSourceType
    target: MetricTarget
    metric_name: str = ""
    resource: str = ""
    container: str = ""
    described_object: ObjectReference | None = None
    selector: Selector | None = None

    def label(self) -> str:
        """A short name for messages: ``cpu``, ``pods/requests_per_second``, ``external/queue``."""
        if self.type in (MetricSourceType.RESOURCE, MetricSourceType.CONTAINER_RESOURCE):
            return self.resource if not self.container else f"{self.container}/{self.resource}"
        return f"{self.type.value.lower()}/{self.metric_name}"


def cpu_utilization_metric(percent: int = DEFAULT_CPU_UTILIZATION) -> MetricSpec:
    target = MetricTarget(MetricTargetType.UTILIZATION, average_utilization=percent)
    return MetricSpec(MetricSourceType.RESOURCE, target, resource=CPU)


class ScalingPolicyType(StrEnum):
    PODS = "Pods"
    PERCENT = "Percent"


class SelectPolicy(StrEnum):
    MAX = "Max"
    MIN = "Min"
    DISABLED = "Disabled"


@dataclass(frozen=True, slots=True)
class ScalingPolicy:
    """``HPAScalingPolicy``: change by ``value`` pods or percent within ``period_s`` seconds."""

    type: ScalingPolicyType
    value: int
    period_s: int


@dataclass(frozen=True, slots=True)
class ScalingRules:
    """``HPAScalingRules`` of one direction; ``None`` fields are "not set" (the API defaults)."""

    stabilization_window_s: int | None = None
    select_policy: SelectPolicy | None = None
    policies: tuple[ScalingPolicy, ...] | None = None
    tolerance: float | None = None


DEFAULT_SCALE_UP = ScalingRules(
    stabilization_window_s=0,
    select_policy=SelectPolicy.MAX,
    policies=(
        ScalingPolicy(ScalingPolicyType.PODS, 4, SCALE_UP_PERIOD_S),
        ScalingPolicy(ScalingPolicyType.PERCENT, 100, SCALE_UP_PERIOD_S),
    ),
)
DEFAULT_SCALE_DOWN = ScalingRules(
    stabilization_window_s=None,
    select_policy=SelectPolicy.MAX,
    policies=(ScalingPolicy(ScalingPolicyType.PERCENT, 100, SCALE_DOWN_PERIOD_S),),
)


def rules_with_defaults(rules: ScalingRules | None, default: ScalingRules) -> ScalingRules:
    """``copyHPAScalingRules``: every field set in ``rules`` replaces the default's."""
    if rules is None:
        return default
    out = default
    if rules.select_policy is not None:
        out = replace(out, select_policy=rules.select_policy)
    if rules.stabilization_window_s is not None:
        out = replace(out, stabilization_window_s=rules.stabilization_window_s)
    if rules.policies is not None:
        out = replace(out, policies=rules.policies)
    if rules.tolerance is not None:
        out = replace(out, tolerance=rules.tolerance)
    return out


@dataclass(frozen=True, slots=True)
class Behavior:
    """``spec.behavior`` after API defaulting (both directions always present)."""

    scale_up: ScalingRules = DEFAULT_SCALE_UP
    scale_down: ScalingRules = DEFAULT_SCALE_DOWN

    @staticmethod
    def of(scale_up: ScalingRules | None, scale_down: ScalingRules | None) -> Behavior:
        return Behavior(
            rules_with_defaults(scale_up, DEFAULT_SCALE_UP),
            rules_with_defaults(scale_down, DEFAULT_SCALE_DOWN),
        )


@dataclass(frozen=True, slots=True)
class HpaSpec:
    """An HPA's spec. ``metrics`` empty means the API default (CPU Utilization 80 %)."""

    max_replicas: int
    min_replicas: int | None = None
    metrics: tuple[MetricSpec, ...] = field(default_factory=lambda: (cpu_utilization_metric(),))
    behavior: Behavior | None = None
    name: str = "hpa"
    namespace: str = "default"
    scale_target_ref: ObjectReference = ObjectReference("Deployment", "app", "apps/v1")

    def effective_min(self) -> int:
        return DEFAULT_MIN_REPLICAS if self.min_replicas is None else self.min_replicas

    def effective_metrics(self) -> tuple[MetricSpec, ...]:
        return self.metrics or (cpu_utilization_metric(),)

    def reference(self) -> str:
        """``Kind/namespace/name`` of the scale target, as the controller's errors name it."""
        ref = self.scale_target_ref
        return f"{ref.kind}/{self.namespace}/{ref.name}"


def _milli_text(milli: int) -> str:
    """A milli-value as the API prints a quantity (``1500`` -> ``"1500m"``, ``2000`` -> ``"2"``)."""
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def _target_dict(t: MetricTarget) -> dict[str, object]:
    out: dict[str, object] = {"type": t.type.value}
    if t.value_milli is not None:
        out["value"] = _milli_text(t.value_milli)
    if t.average_value_milli is not None:
        out["averageValue"] = _milli_text(t.average_value_milli)
    if t.average_utilization is not None:
        out["averageUtilization"] = t.average_utilization
    return out


def _metric_dict(m: MetricSpec) -> dict[str, object]:
    target = _target_dict(m.target)
    if m.type is MetricSourceType.RESOURCE:
        return {"type": m.type.value, "resource": {"name": m.resource, "target": target}}
    if m.type is MetricSourceType.CONTAINER_RESOURCE:
        body = {"name": m.resource, "container": m.container, "target": target}
        return {"type": m.type.value, "containerResource": body}
    metric: dict[str, object] = {"name": m.metric_name}
    if m.selector is not None:
        metric["selector"] = {"matchLabels": dict(m.selector)}
    key = {"Pods": "pods", "Object": "object", "External": "external"}[m.type.value]
    source: dict[str, object] = {"metric": metric, "target": target}
    if m.described_object is not None:
        obj = m.described_object
        source["describedObject"] = {
            "kind": obj.kind,
            "name": obj.name,
            "apiVersion": obj.api_version,
        }
    return {"type": m.type.value, key: source}


def _rules_dict(r: ScalingRules) -> dict[str, object]:
    out: dict[str, object] = {}
    if r.stabilization_window_s is not None:
        out["stabilizationWindowSeconds"] = r.stabilization_window_s
    if r.select_policy is not None:
        out["selectPolicy"] = r.select_policy.value
    if r.policies is not None:
        out["policies"] = [
            {"type": p.type.value, "value": p.value, "periodSeconds": p.period_s}
            for p in r.policies
        ]
    if r.tolerance is not None:
        out["tolerance"] = r.tolerance
    return out


def hpa_to_dict(spec: HpaSpec) -> dict[str, object]:
    """The HPA as an ``autoscaling/v2`` manifest (after API defaulting)."""
    ref = spec.scale_target_ref
    body: dict[str, object] = {
        "scaleTargetRef": {"apiVersion": ref.api_version, "kind": ref.kind, "name": ref.name},
        "minReplicas": spec.effective_min(),
        "maxReplicas": spec.max_replicas,
        "metrics": [_metric_dict(m) for m in spec.effective_metrics()],
    }
    if spec.behavior is not None:
        body["behavior"] = {
            "scaleUp": _rules_dict(spec.behavior.scale_up),
            "scaleDown": _rules_dict(spec.behavior.scale_down),
        }
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": spec.name, "namespace": spec.namespace},
        "spec": body,
    }
