"""What KEDA remembers about a ScaledObject between polls, and its status conditions."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from gpuplane.autoscaler.keda.fallback import Health
from gpuplane.autoscaler.keda.scalers import ScalerPoll


class KedaSettings(BaseModel):
    """The KEDA operator's own knobs that change scaling (not the ScaledObject's fields)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    metrics_server_poll_uses_cache: bool = Field(
        True,
        description="triggers with useCachedMetrics answer the HPA from the last scale-loop "
        "poll instead of querying again",
    )


@dataclass(frozen=True, slots=True)
class KedaCondition:
    type: str  # Ready | Active | Fallback | Paused
    status: str  # True | False | Unknown
    reason: str
    message: str

    def short(self) -> str:
        return f"{self.type}={self.status}/{self.reason}"


READY = KedaCondition(
    "Ready",
    "True",
    "ScaledObjectReady",
    "ScaledObject is defined correctly and is ready for scaling",
)


@dataclass(frozen=True, slots=True)
class KedaState:
    """``status.lastActiveTime``, ``status.health``, the conditions and the metrics cache
    (last poll of each ``useCachedMetrics`` trigger, keyed by metric name)."""

    last_active_s: float | None = None
    health: dict[str, Health] = field(default_factory=dict)
    conditions: tuple[KedaCondition, ...] = ()
    cache: dict[str, ScalerPoll] = field(default_factory=dict)

    def condition(self, kind: str) -> KedaCondition | None:
        return next((c for c in self.conditions if c.type == kind), None)


def set_condition(
    conditions: tuple[KedaCondition, ...], new: KedaCondition
) -> tuple[KedaCondition, ...]:
    for i, old in enumerate(conditions):
        if old.type == new.type:
            return (*conditions[:i], new, *conditions[i + 1 :])
    return (*conditions, new)
