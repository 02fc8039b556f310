"""KEDA's metrics server: what the HPA gets when it asks the external metrics API for one of a
ScaledObject's metrics (``pkg/scaling/scale_handler.go: GetScaledObjectMetrics``).

The HPA polls on its own 15 s period; each request queries the trigger behind the metric again
(or, for a ``useCachedMetrics`` trigger, reads the scale loop's last poll), applies the fallback,
and answers:

- the value, or the fallback value once the trigger failed more than ``failureThreshold`` times;
- otherwise the error ``metric:<name> encountered error`` (the HPA then cannot use the metric);
- with ``scalingModifiers`` the one ``composite-metric``: the formula over every trigger's value
  (or the first fallback value while a fallback is active).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from gpuplane.autoscaler.keda.fallback import Health, fallback_exists, with_fallback
from gpuplane.autoscaler.keda.formula import FormulaError, compile_formula
from gpuplane.autoscaler.keda.hpa_generation import COMPOSITE_METRIC
from gpuplane.autoscaler.keda.model import ScaledObjectIn
from gpuplane.autoscaler.keda.scalers import Scaler, ScalerPoll
from gpuplane.autoscaler.keda.state import KedaCondition, KedaState, set_condition


@dataclass(frozen=True, slots=True)
class MetricAnswer:
    """The external metrics API's answer for one metric, and KEDA's updated state."""

    values_milli: tuple[int, ...] | None
    error: str | None
    state: KedaState


def _composite(
    so: ScaledObjectIn, values: dict[str, int], names: dict[str, str]
) -> tuple[int, ...] | None:
    sm = so.modifiers()
    assert sm is not None
    env: dict[str, float | None] = {names[m]: v / 1000 for m, v in values.items() if m in names}
    try:
        out = compile_formula(sm.formula, frozenset(names.values())).evaluate(env)
    except FormulaError:
        return None  # KEDA logs the error and answers with the trigger metrics unchanged
    scaled = out * 1000
    return (math.trunc(scaled) if math.isfinite(scaled) else 0,)


def external_metric(
    so: ScaledObjectIn,
    scalers: tuple[Scaler, ...],
    metric_name: str,
    polls: dict[str, ScalerPoll],
    state: KedaState,
    current_replicas: int,
    ready_replicas: int,
) -> MetricAnswer:
    """The answer for ``metric_name``; ``polls`` holds a fresh poll per External metric name."""
    composite = so.modifiers() is not None and metric_name == COMPOSITE_METRIC
    health = dict(state.health)
    values: dict[str, int] = {}
    trigger_of: dict[str, str] = {}
    fallback_values: list[int] = []
    any_error = fallback_active = False
    for scaler, trigger in zip(scalers, so.spec.triggers, strict=True):
        spec = scaler.metric_spec(so.metadata.name)
        name = spec.metric_name
        if not name or (not composite and name != metric_name):
            continue
        poll = state.cache.get(name) if trigger.useCachedMetrics else None
        poll = poll or polls.get(name) or ScalerPoll(None, False, "no poll result")
        got = None if poll.value_milli is None else (poll.value_milli,)
        outcome = with_fallback(
            so, spec, got, poll.error, health.get(name), current_replicas, ready_replicas
        )
        if outcome.health is not None:
            health[name] = outcome.health
        if outcome.error is not None:
            any_error = True
            continue
        assert outcome.values_milli is not None
        if outcome.active:
            fallback_active = True
            fallback_values.extend(outcome.values_milli)
        values[name] = outcome.values_milli[0]
        trigger_of[name] = trigger.name or ""
    new_state = _with_fallback_condition(so, replace(state, health=health))
    if not fallback_active and any_error:
        return MetricAnswer(None, f"metric:{metric_name} encountered error", new_state)
    if not values:
        return MetricAnswer(None, f"no matching metrics found for {metric_name}", new_state)
    if composite:
        if fallback_active:
            return MetricAnswer((fallback_values[0],), None, new_state)
        combined = _composite(so, values, trigger_of)
        if combined is not None:
            return MetricAnswer(combined, None, new_state)
    return MetricAnswer(tuple(values.values()), None, new_state)


def _with_fallback_condition(so: ScaledObjectIn, state: KedaState) -> KedaState:
    if so.spec.fallback is None:
        return state
    health: dict[str, Health] = state.health
    if fallback_exists(so, health):
        cond = KedaCondition(
            "Fallback",
            "True",
            "FallbackExists",
            "At least one trigger is falling back on this scaled object",
        )
    else:
        cond = KedaCondition(
            "Fallback", "False", "NoFallbackFound", "No fallbacks are active on this scaled object"
        )
    return replace(state, conditions=set_condition(state.conditions, cond))
