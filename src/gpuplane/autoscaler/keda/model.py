"""The ``keda.sh/v1alpha1`` ScaledObject as pydantic models, field for field with KEDA's types
(``apis/keda/v1alpha1/scaledobject_types.go``, ``scaletriggers_types.go``).

Defaults are KEDA's: ``pollingInterval`` 30 s, ``cooldownPeriod`` 300 s, ``initialCooldownPeriod``
0, ``minReplicaCount`` 0, ``maxReplicaCount`` 100, a trigger's ``metricType`` AverageValue, a
fallback's ``behavior`` static. Trigger metadata values are strings, as in the CRD
(``map[string]string``): ``threshold: "5"``, not ``threshold: 5``. Cross-field rules (the
admission webhook's and the controller's) live in ``validation``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr

from gpuplane.autoscaler.hpa.spec import (
    Behavior,
    ScalingPolicy,
    ScalingPolicyType,
    ScalingRules,
    SelectPolicy,
)

DEFAULT_POLLING_INTERVAL_S = 30
DEFAULT_COOLDOWN_PERIOD_S = 300
DEFAULT_MIN_REPLICA_COUNT = 0
DEFAULT_MAX_REPLICA_COUNT = 100
FORCE_ACTIVATION_ANNOTATION = "autoscaling.keda.sh/force-activation"
PAUSED_SCALE_IN_ANNOTATION = "autoscaling.keda.sh/paused-scale-in"
PAUSED_SCALE_OUT_ANNOTATION = "autoscaling.keda.sh/paused-scale-out"
PAUSED_ANNOTATION = "autoscaling.keda.sh/paused"
PAUSED_REPLICAS_ANNOTATION = "autoscaling.keda.sh/paused-replicas"
GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
GO_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PolicyIn(_Model):
    type: Literal["Pods", "Percent"]
    value: int = Field(gt=0, description="pods or percent per period")
    periodSeconds: int = Field(gt=0, le=1800, description="the policy's window, (0, 1800] s")


class RulesIn(_Model):
    """``HPAScalingRules`` of one direction (missing fields take the HPA API defaults)."""

    stabilizationWindowSeconds: int | None = Field(None, ge=0, le=3600)
    selectPolicy: Literal["Max", "Min", "Disabled"] | None = None
    policies: list[PolicyIn] | None = Field(None, min_length=1)
    tolerance: float | None = Field(None, ge=0, description="HPAConfigurableTolerance")

    def to_rules(self) -> ScalingRules:
        return ScalingRules(
            stabilization_window_s=self.stabilizationWindowSeconds,
            select_policy=None if self.selectPolicy is None else SelectPolicy(self.selectPolicy),
            policies=None
            if self.policies is None
            else tuple(
                ScalingPolicy(ScalingPolicyType(p.type), p.value, p.periodSeconds)
                for p in self.policies
            ),
            tolerance=self.tolerance,
        )


class BehaviorIn(_Model):
    scaleUp: RulesIn | None = None
    scaleDown: RulesIn | None = None

    def to_behavior(self) -> Behavior:
        return Behavior.of(
            None if self.scaleUp is None else self.scaleUp.to_rules(),
            None if self.scaleDown is None else self.scaleDown.to_rules(),
        )


class HpaConfigIn(_Model):
    name: str | None = Field(None, description="name of the HPA KEDA creates")
    behavior: BehaviorIn | None = None


class ScalingModifiersIn(_Model):
    formula: str = Field("", description="expression over trigger names, e.g. (a + b) / 2")
    target: str = Field("", description="target of the composite metric, a number as a string")
    activationTarget: str = Field("", description="activity threshold of the composite metric")
    metricType: Literal["AverageValue", "Value", ""] = ""

    def used(self) -> bool:
        return bool(self.formula or self.target or self.activationTarget or self.metricType)


class AdvancedIn(_Model):
    horizontalPodAutoscalerConfig: HpaConfigIn | None = None
    restoreToOriginalReplicaCount: bool = False
    scalingModifiers: ScalingModifiersIn = ScalingModifiersIn()


class AuthRefIn(_Model):
    name: str
    kind: Literal["TriggerAuthentication", "ClusterTriggerAuthentication"] = "TriggerAuthentication"


class TriggerIn(_Model):
    type: str = Field(description="the scaler, e.g. prometheus, cpu, memory")
    name: str | None = Field(None, description="needed by scalingModifiers formulas")
    metadata: dict[str, StrictStr] = Field(
        default_factory=dict, description="scaler parameters; every value a quoted string"
    )
    metricType: Literal["AverageValue", "Value", "Utilization"] | None = None
    useCachedMetrics: bool = False
    authenticationRef: AuthRefIn | None = None

    def target_type(self) -> str:
        return self.metricType or "AverageValue"


class FallbackIn(_Model):
    failureThreshold: int = Field(ge=0, description="failures before falling back")
    replicas: int = Field(ge=0, description="the replica count to fall back to")
    behavior: Literal[
        "static",
        "currentReplicas",
        "currentReplicasIfHigher",
        "currentReplicasIfLower",
        "scalingModifiers",
        "triggerScoped",
    ] = "static"


class ScaleTargetIn(_Model):
    name: str
    apiVersion: str = "apps/v1"
    kind: str = "Deployment"
    envSourceContainerName: str | None = None


class SpecIn(_Model):
    scaleTargetRef: ScaleTargetIn
    pollingInterval: int = Field(DEFAULT_POLLING_INTERVAL_S, ge=1)
    cooldownPeriod: int = Field(DEFAULT_COOLDOWN_PERIOD_S, ge=0)
    initialCooldownPeriod: int = Field(0, ge=0)
    idleReplicaCount: int | None = Field(None, ge=0)
    minReplicaCount: int | None = Field(None, ge=0)
    maxReplicaCount: int | None = Field(None, ge=0)
    advanced: AdvancedIn | None = None
    triggers: list[TriggerIn] = Field(min_length=1)
    fallback: FallbackIn | None = None


class MetadataIn(BaseModel):
    # Object metadata as kubectl prints it may carry uid, resourceVersion, managedFields...
    model_config = ConfigDict(extra="ignore", frozen=True)
    name: str = Field(min_length=1)
    namespace: str = "default"
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)


class ScaledObjectIn(_Model):
    apiVersion: Literal["keda.sh/v1alpha1"]
    kind: Literal["ScaledObject"]
    metadata: MetadataIn
    spec: SpecIn
    status: dict[str, object] | None = Field(None, description="ignored")

    # -- KEDA's accessors ------------------------------------------------------------------
    def min_replicas(self) -> int:
        s = self.spec.minReplicaCount
        return DEFAULT_MIN_REPLICA_COUNT if s is None else s

    def hpa_min_replicas(self) -> int:
        """``GetHPAMinReplicas``: the HPA's floor can not be 0, so 0 (or unset) becomes 1."""
        s = self.spec.minReplicaCount
        return s if s is not None and s > 0 else 1

    def hpa_max_replicas(self) -> int:
        s = self.spec.maxReplicaCount
        return DEFAULT_MAX_REPLICA_COUNT if s is None else s

    def hpa_name(self) -> str:
        advanced = self.spec.advanced
        config = advanced.horizontalPodAutoscalerConfig if advanced else None
        if config is not None and config.name:
            return config.name
        return f"keda-hpa-{self.metadata.name}"

    def modifiers(self) -> ScalingModifiersIn | None:
        """``scalingModifiers`` when used (``IsUsingModifiers``), else None."""
        advanced = self.spec.advanced
        if advanced is None or not advanced.scalingModifiers.used():
            return None
        return advanced.scalingModifiers

    def annotation_true(self, key: str) -> bool:
        """The annotation parses as true with Go's ``strconv.ParseBool``."""
        return self.metadata.annotations.get(key) in GO_TRUE
