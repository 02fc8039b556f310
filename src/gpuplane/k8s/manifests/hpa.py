"""An ``autoscaling/v2`` HorizontalPodAutoscaler manifest -> :class:`HpaSpec`, and the status
the controller would write back.

Fields and checks follow Kubernetes' ``autoscaling/v2`` types and the API server's validation
(``pkg/apis/autoscaling/validation``, v1.31): ``scaleTargetRef.kind``/``name`` required;
``minReplicas`` >= 1 (0 only behind the HPAScaleToZero gate, which gpuplane does not enable);
``maxReplicas`` >= 1 and >= ``minReplicas``; each metric names its ``type`` and carries exactly
the source of that type; a target ``Utilization`` needs ``averageUtilization`` > 0 and is only
for Resource and ContainerResource metrics, ``Value`` needs ``value`` and ``AverageValue`` needs
``averageValue`` (positive quantities); behavior policies: ``value`` > 0, ``periodSeconds`` in
1..1800, ``stabilizationWindowSeconds`` in 0..3600. Unknown fields are errors, as
``kubectl apply --validate=strict`` reports them. Errors name the file, line and field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gpuplane.api.quantity import parse_quantity
from gpuplane.autoscaler.hpa.compute import MetricStatus
from gpuplane.autoscaler.hpa.spec import (
    Behavior,
    HpaSpec,
    MetricSourceType,
    MetricSpec,
    MetricTarget,
    MetricTargetType,
    ObjectReference,
    ScalingPolicy,
    ScalingPolicyType,
    ScalingRules,
    SelectPolicy,
)
from gpuplane.autoscaler.hpa.state import Condition
from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import read_named_file
from gpuplane.core.validation import validate_model
from gpuplane.k8s.field_errors import relocate
from gpuplane.k8s.yaml_documents import read_documents

API_VERSION = "autoscaling/v2"
KIND = "HorizontalPodAutoscaler"


def quantity_milli(value: object) -> int:
    """A quantity (``"500m"``, ``2``, ``"1.5k"``) in milli-units; positive."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"{value!r} is not a quantity")
    try:
        milli = parse_quantity(str(value)).milli_value()
    except InputError as exc:
        raise ValueError(f"{value!r} is not a quantity ({exc.problem})") from None
    if milli <= 0:
        raise ValueError(f"must be positive, got {value!r}")
    return milli


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TargetIn(_Strict):
    type: Literal["Utilization", "Value", "AverageValue"]
    averageUtilization: int | None = Field(None, gt=0)
    value: str | int | float | None = None
    averageValue: str | int | float | None = None

    @model_validator(mode="after")
    def _one_value(self) -> Self:
        needed = {"Utilization": "averageUtilization", "Value": "value"}
        key = needed.get(self.type, "averageValue")
        if getattr(self, key) is None:
            raise ValueError(f"must set {key} when type is {self.type}")
        for name in ("value", "averageValue"):
            raw = getattr(self, name)
            if raw is not None:
                quantity_milli(raw)
        return self

    def to_target(self) -> MetricTarget:
        kind = MetricTargetType(self.type)
        value = None if self.value is None else quantity_milli(self.value)
        average = None if self.averageValue is None else quantity_milli(self.averageValue)
        return MetricTarget(kind, value, average, self.averageUtilization)


class SelectorIn(_Strict):
    matchLabels: dict[str, str] = Field(default_factory=dict)


class IdentifierIn(_Strict):
    name: str = Field(min_length=1)
    selector: SelectorIn | None = None


class ResourceIn(_Strict):
    name: str = Field(min_length=1)
    target: TargetIn


class ContainerResourceIn(ResourceIn):
    container: str = Field(min_length=1)


class PodsIn(_Strict):
    metric: IdentifierIn
    target: TargetIn


class RefIn(_Strict):
    kind: str = Field(min_length=1)
    name: str = Field(min_length=1)
    apiVersion: str = ""

    def to_ref(self) -> ObjectReference:
        return ObjectReference(self.kind, self.name, self.apiVersion)


class ObjectIn(PodsIn):
    describedObject: RefIn


_SOURCE_KEY = {
    "Resource": "resource",
    "ContainerResource": "containerResource",
    "Pods": "pods",
    "Object": "object",
    "External": "external",
}


_UTILIZATION_SOURCES = ("Resource", "ContainerResource")


class MetricIn(_Strict):
    type: Literal["Resource", "ContainerResource", "Pods", "Object", "External"]
    resource: ResourceIn | None = None
    containerResource: ContainerResourceIn | None = None
    pods: PodsIn | None = None
    object: ObjectIn | None = None
    external: PodsIn | None = None

    @model_validator(mode="after")
    def _matching_source(self) -> Self:
        key = _SOURCE_KEY[self.type]
        if getattr(self, key) is None:
            raise ValueError(f"must populate information for the given metric source: {key}")
        extra = [k for k in _SOURCE_KEY.values() if k != key and getattr(self, k) is not None]
        if extra:
            raise ValueError(f"must populate the given metric source only: {extra[0]} is set")
        source = getattr(self, key)
        if source.target.type == "Utilization" and self.type not in _UTILIZATION_SOURCES:
            raise ValueError(f"target type Utilization is only for Resource metrics, not {key}")
        return self

    def to_spec(self) -> MetricSpec:
        kind = MetricSourceType(self.type)
        if self.resource is not None:
            return MetricSpec(kind, self.resource.target.to_target(), resource=self.resource.name)
        if self.containerResource is not None:
            c = self.containerResource
            return MetricSpec(kind, c.target.to_target(), resource=c.name, container=c.container)
        source = self.pods or self.object or self.external
        assert source is not None
        selector = None
        if source.metric.selector is not None:
            selector = tuple(sorted(source.metric.selector.matchLabels.items()))
        described = self.object.describedObject.to_ref() if self.object is not None else None
        return MetricSpec(
            kind,
            source.target.to_target(),
            metric_name=source.metric.name,
            described_object=described,
            selector=selector,
        )


class PolicyIn(_Strict):
    type: Literal["Pods", "Percent"]
    value: int = Field(gt=0)
    periodSeconds: int = Field(gt=0, le=1800)


class RulesIn(_Strict):
    selectPolicy: Literal["Max", "Min", "Disabled"] | None = None
    stabilizationWindowSeconds: int | None = Field(None, ge=0, le=3600)
    policies: list[PolicyIn] | None = Field(None, min_length=1)
    tolerance: str | int | float | None = None

    def to_rules(self) -> ScalingRules:
        policies = None
        if self.policies is not None:
            policies = tuple(
                ScalingPolicy(ScalingPolicyType(p.type), p.value, p.periodSeconds)
                for p in self.policies
            )
        tolerance = None
        if self.tolerance is not None:
            tolerance = quantity_milli(self.tolerance) / 1000
        return ScalingRules(
            stabilization_window_s=self.stabilizationWindowSeconds,
            select_policy=None if self.selectPolicy is None else SelectPolicy(self.selectPolicy),
            policies=policies,
            tolerance=tolerance,
        )


class BehaviorIn(_Strict):
    scaleUp: RulesIn | None = None
    scaleDown: RulesIn | None = None


class SpecIn(_Strict):
    scaleTargetRef: RefIn
    minReplicas: int | None = Field(None, ge=1)
    maxReplicas: int = Field(ge=1)
    metrics: list[MetricIn] | None = None
    behavior: BehaviorIn | None = None

    @model_validator(mode="after")
    def _bounds(self) -> Self:
        if self.minReplicas is not None and self.maxReplicas < self.minReplicas:
            raise ValueError("maxReplicas must be greater than or equal to `minReplicas`")
        return self


class MetadataIn(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    name: str = Field(min_length=1)
    namespace: str = "default"


class HpaIn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    apiVersion: Literal["autoscaling/v2"]
    kind: Literal["HorizontalPodAutoscaler"]
    metadata: MetadataIn
    spec: SpecIn
    status: dict[str, Any] | None = None

    @field_validator("status")
    @classmethod
    def _ignored(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        return v  # the controller writes status; what the file says is replaced

    def to_spec(self) -> HpaSpec:
        s = self.spec
        behavior = None
        if s.behavior is not None:
            up, down = s.behavior.scaleUp, s.behavior.scaleDown
            behavior = Behavior.of(
                None if up is None else up.to_rules(), None if down is None else down.to_rules()
            )
        return HpaSpec(
            max_replicas=s.maxReplicas,
            min_replicas=s.minReplicas,
            metrics=tuple(m.to_spec() for m in s.metrics or ()),
            behavior=behavior,
            name=self.metadata.name,
            namespace=self.metadata.namespace,
            scale_target_ref=s.scaleTargetRef.to_ref(),
        )


def load_hpa(path: Path) -> tuple[HpaSpec, dict[str, Any]]:
    """The one HorizontalPodAutoscaler of ``path`` (its spec, and the manifest as written)."""
    source = str(path)
    text = read_named_file(path, "HorizontalPodAutoscaler YAML file")
    docs = [d for d in read_documents(text, source) if d.data is not None]
    found = [d for d in docs if isinstance(d.data, dict) and d.data.get("kind") == KIND]
    if len(found) != 1:
        raise InputError(
            f"the file holds {len(found)} HorizontalPodAutoscaler objects",
            expected=f"exactly one {API_VERSION} {KIND}",
            location=Location(source, 1),
        )
    doc = found[0]
    try:
        hpa = validate_model(HpaIn, doc.data)
    except InputError as err:
        raise relocate(err, source, doc.line_of) from None
    return hpa.to_spec(), dict(doc.data)


def _metric_status(status: MetricStatus, spec: MetricSpec) -> dict[str, Any]:
    """``MetricStatus`` as autoscaling/v2 writes it (quantities as the API prints them)."""
    current: dict[str, Any] = {}
    if status.average_utilization is not None:
        current["averageUtilization"] = status.average_utilization
    if status.average_value_milli is not None:
        current["averageValue"] = _milli_text(status.average_value_milli)
    if status.value_milli is not None:
        current["value"] = _milli_text(status.value_milli)
    key = _SOURCE_KEY[spec.type.value]
    body: dict[str, Any]
    if spec.type in (MetricSourceType.RESOURCE, MetricSourceType.CONTAINER_RESOURCE):
        body = {"name": spec.resource, "current": current}
        if spec.container:
            body["container"] = spec.container
    else:
        body = {"metric": {"name": spec.metric_name}, "current": current}
        if spec.described_object is not None:
            ref = spec.described_object
            body["describedObject"] = {"kind": ref.kind, "name": ref.name}
            if ref.api_version:
                body["describedObject"]["apiVersion"] = ref.api_version
    return {"type": spec.type.value, key: body}


def _milli_text(milli: int) -> str:
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def hpa_status(
    spec: HpaSpec,
    current_replicas: int,
    desired_replicas: int,
    statuses: tuple[MetricStatus, ...],
    conditions: tuple[Condition, ...],
) -> dict[str, Any]:
    """``HorizontalPodAutoscalerStatus`` after the sync (no timestamps: there is no clock)."""
    specs = spec.effective_metrics()
    metrics = [
        _metric_status(
            s,
            next(
                (m for m in specs if m.type is s.type and (m.metric_name or m.resource) == s.name),
                specs[min(i, len(specs) - 1)],
            ),
        )
        for i, s in enumerate(statuses)
    ]
    out: dict[str, Any] = {
        "currentReplicas": current_replicas,
        "desiredReplicas": desired_replicas,
    }
    if metrics:
        out["currentMetrics"] = metrics
    out["conditions"] = [
        {"type": c.type.value, "status": c.status.value, "reason": c.reason, "message": c.message}
        for c in conditions
    ]
    return out
