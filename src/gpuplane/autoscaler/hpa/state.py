"""The HPA's status conditions and the memory the controller keeps between syncs."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from gpuplane.autoscaler.hpa.normalize import Recommendation, ScaleEvent
from gpuplane.autoscaler.hpa.pods import ConditionStatus


class ConditionType(StrEnum):
    ABLE_TO_SCALE = "AbleToScale"
    SCALING_ACTIVE = "ScalingActive"
    SCALING_LIMITED = "ScalingLimited"


@dataclass(frozen=True, slots=True)
class Condition:
    """``HorizontalPodAutoscalerCondition``; the transition time changes only with the status."""

    type: ConditionType
    status: ConditionStatus
    reason: str
    message: str
    last_transition_s: float = 0.0

    def short(self) -> str:
        """``ScalingActive=False/ScalingDisabled``."""
        return f"{self.type.value}={self.status.value}/{self.reason}"


def set_condition(
    conditions: tuple[Condition, ...],
    kind: ConditionType,
    status: ConditionStatus,
    reason: str,
    message: str,
    now_s: float,
) -> tuple[Condition, ...]:
    """``setConditionInList``: update the condition of that type in place, or append it."""
    for i, old in enumerate(conditions):
        if old.type is kind:
            moved = now_s if old.status is not status else old.last_transition_s
            new = Condition(kind, status, reason, message, moved)
            return (*conditions[:i], new, *conditions[i + 1 :])
    return (*conditions, Condition(kind, status, reason, message, now_s))


@dataclass(frozen=True, slots=True)
class HpaState:
    """What kube-controller-manager remembers about one HPA, plus the HPA's status fields the
    next sync reads back (conditions, ``desiredReplicas``, ``lastScaleTime``).

    Empty ``recommendations`` mean the controller has not seen this HPA yet: its first sync
    records the current replica count as a recommendation.
    """

    recommendations: tuple[Recommendation, ...] = ()
    scale_up_events: tuple[ScaleEvent, ...] = ()
    scale_down_events: tuple[ScaleEvent, ...] = ()
    conditions: tuple[Condition, ...] = ()
    desired_replicas: int = 0
    last_scale_s: float | None = None
