"""kube-controller-manager's HPA flags and the feature gates that change the HPA's behaviour."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class HpaControllerSettings(BaseModel):
    """The HPA controller's configuration (``HPAControllerConfiguration``), in seconds.

    Defaults are kube-controller-manager's (``pkg/controller/podautoscaler/config/v1alpha1``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    sync_period_s: float = Field(
        15.0, gt=0, description="--horizontal-pod-autoscaler-sync-period: seconds between syncs"
    )
    tolerance: float = Field(
        0.1,
        ge=0,
        description="--horizontal-pod-autoscaler-tolerance: no scaling while the usage ratio "
        "is within 1 +/- tolerance",
    )
    downscale_stabilization_s: float = Field(
        300.0,
        ge=0,
        description="--horizontal-pod-autoscaler-downscale-stabilization: scale-down window",
    )
    cpu_initialization_period_s: float = Field(
        300.0,
        ge=0,
        description="--horizontal-pod-autoscaler-cpu-initialization-period: CPU samples of pods "
        "started this recently are trusted only once the pod is ready and one metric window passed",
    )
    initial_readiness_delay_s: float = Field(
        30.0,
        ge=0,
        description="--horizontal-pod-autoscaler-initial-readiness-delay: a pod not ready within "
        "this time of starting is treated as never having been ready",
    )
    configurable_tolerance: bool = Field(
        True,
        description="feature gate HPAConfigurableTolerance (alpha 1.33, beta on by default 1.35): "
        "honour behavior.scaleUp/scaleDown.tolerance",
    )
    scale_to_zero: bool = Field(
        False,
        description="feature gate HPAScaleToZero (alpha, off): allow minReplicas 0 when at least "
        "one Object or External metric is configured",
    )
    pod_level_resources: bool = Field(
        True,
        description="feature gate PodLevelResources: use pod-level requests when a pod sets them",
    )
