"""The JSON case families of ``gpuplane autoscale hpa-check`` (shared/reference/hpa-examples.json).

Each family is a pydantic model of one case without its ``expected*`` fields; the case's
bookkeeping keys (``id``, ``name``, ``source``, ``note``) are accepted and not used. Rules and
policies use the Kubernetes API's camelCase names and its validation bounds (a policy's value
> 0, its period in (0, 1800] s, a stabilization window in [0, 3600] s).
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator

from gpuplane.autoscaler.hpa.normalize import Recommendation, ScaleEvent
from gpuplane.autoscaler.hpa.replica_calculator import Tolerances
from gpuplane.autoscaler.hpa.spec import (
    ScalingPolicy,
    ScalingPolicyType,
    ScalingRules,
    SelectPolicy,
)
from gpuplane.core.errors import InputError, Location


class _Case(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    family: str = Field(description="the list of hpa-examples.json this case belongs to")
    id: int | str | None = None
    name: str | None = None
    source: str | None = None
    note: str | None = None
    description: str | None = None


class PolicyIn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["Pods", "Percent"]
    value: int = Field(gt=0, description="pods or percent per period")
    periodSeconds: int = Field(gt=0, le=1800, description="the policy's window in seconds")

    def to_policy(self) -> ScalingPolicy:
        return ScalingPolicy(ScalingPolicyType(self.type), self.value, self.periodSeconds)


class RulesIn(BaseModel):
    """``HPAScalingRules``; a missing field takes the API default of its direction."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    selectPolicy: Literal["Max", "Min", "Disabled"] | None = None
    stabilizationWindowSeconds: int | None = Field(None, ge=0, le=3600)
    policies: list[PolicyIn] | None = Field(None, min_length=1)
    tolerance: float | None = Field(None, ge=0)

    def to_rules(self) -> ScalingRules:
        return ScalingRules(
            stabilization_window_s=self.stabilizationWindowSeconds,
            select_policy=None if self.selectPolicy is None else SelectPolicy(self.selectPolicy),
            policies=None if self.policies is None else tuple(p.to_policy() for p in self.policies),
            tolerance=self.tolerance,
        )


class EventIn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    change: int = Field(description="replicas added (scale up) or removed (scale down)")
    age_seconds: float = Field(ge=0, description="how long ago the rescale happened")

    def at(self, now_s: float) -> ScaleEvent:
        return ScaleEvent(self.change, now_s - self.age_seconds)


class RecommendationIn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    replicas: int
    age_seconds: float = Field(ge=0)

    def at(self, now_s: float) -> Recommendation:
        return Recommendation(self.replicas, now_s - self.age_seconds)


class ToleranceIn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    scale_up: float = Field(0.1, ge=0)
    scale_down: float = Field(0.1, ge=0)

    def to_tolerances(self) -> Tolerances:
        return Tolerances(scale_down=self.scale_down, scale_up=self.scale_up)


class PodIn(BaseModel):
    """A pod of a replica-calculator case; ``start`` is ``hot`` (inside the CPU initialization
    period, with a sample taken too early to trust) or ``cool`` (long started)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    phase: Literal["Running", "Pending", "Failed", "Succeeded", "Unknown"] = "Running"
    ready: bool = True
    start: Literal["hot", "cool"] = "cool"
    deleted: bool = False
    request_milli: int | None = Field(None, ge=0, description="the pod's total request")
    usage_milli: int | None = Field(None, description="the pod's sample; null = no sample")


ReplicaCalcKind = Literal[
    "resource_utilization",
    "resource_average_value",
    "pods_metric",
    "object_value",
    "object_average_value",
    "external_value",
    "external_average_value",
]


# The kinds whose metric is a sample per pod (the others read one object or external value).
POD_SAMPLE_KINDS = ("resource_utilization", "resource_average_value", "pods_metric")


class ReplicaCalcCase(_Case):
    kind: ReplicaCalcKind
    current_replicas: int = Field(ge=0)
    tolerance: ToleranceIn = ToleranceIn()
    target: int = Field(gt=0, description="percent for Utilization, else milli-units")
    pods: list[PodIn] = Field(default_factory=list)
    metric_values_milli: list[int] = Field(default_factory=list)
    status_replicas: int | None = Field(None, ge=0)
    resource: str = "cpu"
    extra_metrics_for_unknown_pods_milli: list[int] = Field(
        default_factory=list,
        description="pod-total samples the metrics API returns for pods not in the pod list",
    )

    @model_validator(mode="after")
    def _pod_samples_need_pods(self) -> Self:
        # The replica calculator lists the pods for these kinds; without a list it has none
        # ("no pods returned by selector while calculating replica count").
        if self.kind in POD_SAMPLE_KINDS and "pods" not in self.model_fields_set:
            raise InputError(
                "required key 'pods' is missing",
                expected=f"pods: [...] (kind {self.kind} reads a sample per pod)",
                location=Location(field="pods"),
            )
        return self

    @model_validator(mode="after")
    def _unknown_pods_need_pod_samples(self) -> Self:
        if self.extra_metrics_for_unknown_pods_milli and self.kind not in POD_SAMPLE_KINDS:
            raise ValueError(
                "extra_metrics_for_unknown_pods_milli are pod samples: only kinds "
                f"{', '.join(POD_SAMPLE_KINDS)} read them, not {self.kind}"
            )
        return self


class BehaviorRateCase(_Case):
    current_replicas: int = Field(ge=0)
    desired_replicas: int = Field(ge=0)
    min_replicas: int = Field(ge=0)
    max_replicas: int = Field(ge=1)
    scale_up_rules: RulesIn | None = None
    scale_down_rules: RulesIn | None = None
    scale_up_events: list[EventIn] = Field(default_factory=list)
    scale_down_events: list[EventIn] = Field(default_factory=list)


class LimitCase(_Case):
    function: Literal[
        "scale_up_limit",
        "scale_down_limit",
        "calculateScaleUpLimitWithScalingRules",
        "calculateScaleDownLimitWithBehaviors",
    ]
    current_replicas: int = Field(ge=0)
    rules: RulesIn | None = None
    events: list[EventIn] = Field(
        default_factory=list, description="past events of the function's own direction"
    )
    scale_up_events: list[EventIn] = Field(default_factory=list)
    scale_down_events: list[EventIn] = Field(default_factory=list)


class StabilizationCase(_Case):
    recommendations: list[RecommendationIn] = Field(default_factory=list)
    current_replicas: int = Field(ge=0)
    desired_replicas: int = Field(ge=0)
    scale_up_window_seconds: int = Field(0, ge=0)
    scale_down_window_seconds: int = Field(300, ge=0)


class LegacyStabilizationCase(_Case):
    recommendations: list[RecommendationIn] = Field(default_factory=list)
    desired_replicas: int = Field(ge=0)
    downscale_stabilization_window_seconds: int = Field(300, ge=0)


class LegacyRulesCase(_Case):
    current_replicas: int = Field(ge=0)
    desired_replicas: int = Field(ge=0)
    min_replicas: int = Field(ge=0)
    max_replicas: int = Field(ge=1)


class ControllerCase(_Case):
    """A whole sync with one CPU Utilization metric. The per-pod inputs follow
    horizontal_test.go's harness: pod ``i`` is ``test-pod-<i>`` (Running, Ready, started long
    ago, one container); ``pod_cpu_request_milli`` gives one request per pod (null: the pod sets
    no CPU request), and without it there are ``status_replicas`` pods of 1000m each;
    ``pod_cpu_usage_milli[i]`` is test-pod-<i>'s fresh sample (null or past the end: none), and
    entries past the last pod are samples of pods the lister does not know."""

    min_replicas: int | None = Field(None, ge=0)
    max_replicas: int = Field(ge=1)
    spec_replicas: int = Field(ge=0)
    status_replicas: int | None = Field(None, ge=0)
    cpu_target_utilization: int = Field(
        80,
        gt=0,
        validation_alias=AliasChoices("cpu_target_utilization", "cpu_target"),
        description="the CPU Utilization target, percent (also accepted as cpu_target)",
    )
    pod_cpu_usage_milli: list[int | None] | None = Field(None, description="per-pod CPU samples")
    pod_cpu_request_milli: list[int | None] | None = Field(
        None, description="per-pod CPU requests (null: none)"
    )

    @model_validator(mode="after")
    def _requests_are_not_negative(self) -> Self:
        for value in (*(self.pod_cpu_request_milli or ()), *(self.pod_cpu_usage_milli or ())):
            if value is not None and value < 0:
                raise ValueError(f"CPU requests and samples are >= 0, got {value}")
        return self
