"""Job, Deployment, ReplicaSet and PodGroup: the API types, their defaults and validation.

Checked against (read through the code index):

- kubernetes/api ``apps/v1/types.go`` @ 3bd457f5 (DeploymentSpec, DeploymentStrategy,
  RollingUpdateDeployment, ReplicaSetSpec); ``batch/v1`` JobSpec fields as
  kubernetes/kubernetes ``pkg/apis/batch/validation/validation.go`` (newest in the index)
  validates them: podFailurePolicy, successPolicy, backoffLimitPerIndex, maxFailedIndexes,
  podReplacementPolicy, managedBy besides the classic ones.
- defaults: ``pkg/apis/apps/v1/defaults.go`` (replicas 1, RollingUpdate with maxSurge and
  maxUnavailable 25%), ``pkg/apis/batch/v1/defaults.go`` (completions and parallelism 1 when both
  are unset, parallelism 1, backoffLimit 6, completionMode NonIndexed, Job labels copied from the
  template when the Job has none).
- validation messages: ``pkg/apis/apps/validation/validation.go`` and the batch file above.
- kubernetes-sigs/scheduler-plugins ``apis/scheduling/v1alpha1/types.go`` @ 08079b77
  (PodGroupSpec: minMember, minResources, scheduleTimeoutSeconds).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, StrictBool, StrictStr

from gpuplane.k8s.field_errors import fail
from gpuplane.k8s.manifests.api_types import Int32, Int64, IntOrString, K8sModel, PodTemplateSpec
from gpuplane.k8s.manifests.labels import LabelSelector, check_selector

MAX_INDEXED_PARALLELISM = 100_000
_PERCENT = re.compile(r"^[0-9]+%$")


class JobSpec(K8sModel):
    parallelism: Int32 | None = None
    completions: Int32 | None = None
    active_deadline_seconds: Int64 | None = Field(default=None, alias="activeDeadlineSeconds")
    pod_failure_policy: Any = Field(default=None, alias="podFailurePolicy")
    success_policy: Any = Field(default=None, alias="successPolicy")
    backoff_limit: Int32 | None = Field(default=None, alias="backoffLimit")
    backoff_limit_per_index: Int32 | None = Field(default=None, alias="backoffLimitPerIndex")
    max_failed_indexes: Int32 | None = Field(default=None, alias="maxFailedIndexes")
    selector: LabelSelector | None = None
    manual_selector: StrictBool | None = Field(default=None, alias="manualSelector")
    template: PodTemplateSpec | None = None
    ttl_seconds_after_finished: Any = Field(default=None, alias="ttlSecondsAfterFinished")
    completion_mode: StrictStr | None = Field(default=None, alias="completionMode")
    suspend: StrictBool | None = None
    pod_replacement_policy: Any = Field(default=None, alias="podReplacementPolicy")
    managed_by: Any = Field(default=None, alias="managedBy")


class RollingUpdateDeployment(K8sModel):
    max_unavailable: IntOrString | None = Field(default=None, alias="maxUnavailable")
    max_surge: IntOrString | None = Field(default=None, alias="maxSurge")


class DeploymentStrategy(K8sModel):
    type: StrictStr | None = None
    rolling_update: RollingUpdateDeployment | None = Field(default=None, alias="rollingUpdate")


class DeploymentSpec(K8sModel):
    replicas: Int32 | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec | None = None
    strategy: DeploymentStrategy | None = None
    min_ready_seconds: Int32 | None = Field(default=None, alias="minReadySeconds")
    revision_history_limit: Int32 | None = Field(default=None, alias="revisionHistoryLimit")
    paused: StrictBool | None = None
    progress_deadline_seconds: Int32 | None = Field(default=None, alias="progressDeadlineSeconds")


class ReplicaSetSpec(K8sModel):
    replicas: Int32 | None = None
    min_ready_seconds: Int32 | None = Field(default=None, alias="minReadySeconds")
    selector: LabelSelector | None = None
    template: PodTemplateSpec | None = None


class PodGroupSpec(K8sModel):
    min_member: Int32 | None = Field(default=None, alias="minMember")
    min_resources: dict[str, Any] | None = Field(default=None, alias="minResources")
    schedule_timeout_seconds: Int32 | None = Field(default=None, alias="scheduleTimeoutSeconds")


def nonnegative(value: int | None, field: str) -> None:
    if value is not None and value < 0:
        raise fail(f"{value}: must be greater than or equal to 0", field)


# Kubernetes' scalability thresholds (sig-scalability, "Kubernetes Scalability thresholds"):
# 150,000 pods in a cluster. A workload asking for more pods than any cluster can hold is refused
# rather than simulated for hours (docs/twin.md, "Bounds").
MAX_PODS_PER_WORKLOAD = 150_000


def bounded_pods(value: int, field: str) -> None:
    """``value`` pods from one object: within what a Kubernetes cluster can hold."""
    if value > MAX_PODS_PER_WORKLOAD:
        raise fail(
            f"{value} pods: more than a Kubernetes cluster holds "
            f"({MAX_PODS_PER_WORKLOAD:,} pods, the scalability threshold)",
            field,
            f"at most {MAX_PODS_PER_WORKLOAD:,}",
        )


def check_controller_selector(
    selector: LabelSelector | None, labels: dict[str, str], path: str
) -> None:
    """Deployment / ReplicaSet: a non-empty selector that matches the template's labels."""
    if selector is None:
        raise fail("Required value", f"{path}.selector", "a selector such as matchLabels: {app: x}")
    check_selector(selector, f"{path}.selector")
    if selector.is_empty():
        raise fail("empty selector is invalid for deployment", f"{path}.selector")
    if not selector.to_selector().matches(labels):
        raise fail(
            f"Invalid value: {labels!r}: `selector` does not match template `labels`",
            f"{path}.template.metadata.labels",
            "template labels that satisfy spec.selector",
        )


def int_or_percent(value: int | str | None, default: str, field: str) -> int | str:
    """``ValidatePositiveIntOrPercent``: a non-negative int or ``N%``."""
    if value is None:
        return default
    if isinstance(value, bool):
        raise fail(f"got {value!r}", field, "an integer or a percentage such as 25%")
    if isinstance(value, str):
        if not _PERCENT.match(value):
            raise fail(
                f"{value!r}: a valid percent string must be a numeric string followed by an "
                "ending '%' (e.g. '1%',  or '93%')",
                field,
            )
        return value
    nonnegative(value, field)
    return value


def percent_or_int_value(value: int | str) -> int:
    """``getIntOrPercentValue``: the number, ignoring a trailing ``%``."""
    return int(value[:-1]) if isinstance(value, str) else value


def strategy_params(spec: DeploymentSpec) -> tuple[int | str, int | str]:
    """(maxSurge, maxUnavailable) after SetDefaults_Deployment and ValidateDeploymentStrategy."""
    strategy = spec.strategy or DeploymentStrategy()
    kind = strategy.type or "RollingUpdate"
    if kind == "Recreate":
        if strategy.rolling_update is not None:
            raise fail(
                "may not be specified when strategy `type` is 'Recreate'",
                "spec.strategy.rollingUpdate",
            )
        # Recreate stops every old pod before starting new ones: no surge, all unavailable.
        return 0, "100%"
    if kind != "RollingUpdate":
        raise fail(
            f"Unsupported value: {kind!r}", "spec.strategy.type", '"Recreate", "RollingUpdate"'
        )
    rolling = strategy.rolling_update or RollingUpdateDeployment()
    path = "spec.strategy.rollingUpdate"
    surge = int_or_percent(rolling.max_surge, "25%", f"{path}.maxSurge")
    unavailable = int_or_percent(rolling.max_unavailable, "25%", f"{path}.maxUnavailable")
    if percent_or_int_value(surge) == 0 and percent_or_int_value(unavailable) == 0:
        raise fail(f"{unavailable!r}: may not be 0 when `maxSurge` is 0", f"{path}.maxUnavailable")
    if isinstance(unavailable, str) and percent_or_int_value(unavailable) > 100:
        raise fail(f"{unavailable!r}: must not be greater than 100%", f"{path}.maxUnavailable")
    return surge, unavailable
