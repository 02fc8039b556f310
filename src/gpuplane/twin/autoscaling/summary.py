"""The autoscalers' sections of the run summary: KEDA/HPA per ScaledObject (``autoscaling``) and
gpuplane's SLO scaler per service (``slo_scaling``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuplane.twin.component import fields_dict


@dataclass(frozen=True, slots=True)
class ScaledObjectSummary:
    scaled_object: str  # namespace/name
    target: str  # namespace/deployment
    scale_events: int
    replicas_at_end: int
    max_replicas_seen: int

    def as_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True, slots=True)
class AutoscalingSummary:
    scaled_objects: tuple[ScaledObjectSummary, ...]

    def as_dict(self) -> list[dict[str, Any]]:
        return [s.as_dict() for s in self.scaled_objects]


@dataclass(frozen=True, slots=True)
class SloScalerSummary:
    """Scale events, the highest count asked for, and the observed-over-predicted latency ratios
    the scaler ended with (near 1: the capacity model describes the engines), and where its
    signals came from (``deployable`` or ``oracle``: ``SignalSource``)."""

    service: str
    scale_events: int
    max_replicas: int
    ttft_correction: float
    itl_correction: float
    signals: str = "deployable"

    def as_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True, slots=True)
class SloScalingSummary:
    scalers: tuple[SloScalerSummary, ...]

    def as_dict(self) -> list[dict[str, Any]]:
        return [s.as_dict() for s in self.scalers]
