"""KEDA's fallback (``pkg/fallback/fallback.go``): when a trigger keeps failing, answer the HPA
with a synthetic metric that makes it land on a chosen replica count.

Per metric KEDA keeps ``{numberOfFailures, status Happy|Failing}``: a success resets it, a failure
adds one. Once the failures exceed ``failureThreshold`` the error is replaced by a value
``target × R`` (AverageValue metric, so the HPA's ``ceil(value / target)`` is R) or
``target × R / readyReplicas`` (Value metric, so ``ceil(value / target × ready)`` is R), where R
is ``replicas`` (static), the current count (currentReplicas), or the larger / smaller of the two
(currentReplicasIfHigher / IfLower). With ``behavior: scalingModifiers`` the failing trigger
reads as -1 in the formula instead. The ScaledObject's Fallback condition is True
(``FallbackExists``) while any metric is over the threshold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuplane.autoscaler.hpa.spec import MetricSpec, MetricTargetType
from gpuplane.autoscaler.keda.model import ScaledObjectIn


@dataclass(frozen=True, slots=True)
class Health:
    """``HealthStatus`` of one metric."""

    failures: int = 0
    failing: bool = False


@dataclass(frozen=True, slots=True)
class FallbackOutcome:
    """The metric values the HPA gets (milli-units), or the error, and the new health."""

    values_milli: tuple[int, ...] | None
    error: str | None
    active: bool
    health: Health | None  # None: health is not tracked (no valid fallback)


def has_valid_fallback(so: ScaledObjectIn) -> bool:
    """``HasValidFallback`` (with scalingModifiers the target must parse as an integer > 0)."""
    fb = so.spec.fallback
    if fb is None:
        return False
    sm = so.modifiers()
    if sm is not None:
        try:
            if int(sm.target) <= 0:
                return False
        except ValueError:
            return False
    return fb.failureThreshold >= 0 and fb.replicas >= 0


def fallback_replicas(so: ScaledObjectIn, current_replicas: int) -> int:
    fb = so.spec.fallback
    assert fb is not None
    if fb.behavior == "currentReplicas":
        return current_replicas
    if fb.behavior == "currentReplicasIfHigher":
        return max(current_replicas, fb.replicas)
    if fb.behavior == "currentReplicasIfLower":
        return min(current_replicas, fb.replicas)
    return fb.replicas


def _fallback_value(
    so: ScaledObjectIn, spec: MetricSpec, current: int, ready: int
) -> tuple[int | None, str | None]:
    replicas = float(fallback_replicas(so, current))
    sm = so.modifiers()
    value_type = (
        MetricTargetType.VALUE
        if (sm is not None and sm.metricType == "Value")
        or (sm is None and spec.target.type is MetricTargetType.VALUE)
        else MetricTargetType.AVERAGE_VALUE
    )
    if value_type is MetricTargetType.VALUE:
        if ready == 0:
            return None, "error performing fallback"
        replicas /= ready
    if sm is not None:
        normalisation = float(sm.target)
    else:
        milli = spec.target.value_milli or spec.target.average_value_milli or 0
        normalisation = milli / 1000
    scaled = normalisation * 1000 * replicas
    return (math.trunc(scaled) if math.isfinite(scaled) else 0), None


def with_fallback(
    so: ScaledObjectIn,
    spec: MetricSpec,
    values_milli: tuple[int, ...] | None,
    error: str | None,
    health: Health | None,
    current_replicas: int,
    ready_replicas: int,
) -> FallbackOutcome:
    """``GetMetricsWithFallback`` for one metric of one poll."""
    configured = has_valid_fallback(so)
    if error is None:
        return FallbackOutcome(values_milli, None, False, Health() if configured else health)
    if not configured:
        return FallbackOutcome(None, error, False, health)
    fb = so.spec.fallback
    assert fb is not None
    old = health or Health()
    new = Health(old.failures + 1, True)
    if new.failures <= fb.failureThreshold:
        return FallbackOutcome(None, error, False, new)
    if fb.behavior == "scalingModifiers":
        return FallbackOutcome((-1000,), None, False, new)  # the formula's ?? sees -1
    value, problem = _fallback_value(so, spec, current_replicas, ready_replicas)
    if value is None:
        return FallbackOutcome(None, problem, False, new)
    return FallbackOutcome((value,), None, True, new)


def fallback_exists(so: ScaledObjectIn, health: dict[str, Health]) -> bool:
    fb = so.spec.fallback
    if fb is None:
        return False
    return any(h.failing and h.failures > fb.failureThreshold for h in health.values())
