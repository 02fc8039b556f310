"""One iteration of KEDA's scale loop for a ScaledObject, every ``pollingInterval`` seconds
(``pkg/scaling/scale_handler.go: getScaledObjectState``, ``pkg/scaling/executor/
scale_scaledobjects.go: RequestScale``), as a pure decision.

Activity: the ScaledObject is active when any trigger is (Prometheus: value >
``activationThreshold``), or, with ``scalingModifiers``, when the composite value is above
``activationTarget`` (default 0); when every trigger is cpu/memory it is always active; the
``autoscaling.keda.sh/force-activation`` annotation forces it.

Then KEDA only moves between zero/idle and the minimum; everything between min and max is the
HPA's job:

- active and at 0 replicas (or below min with ``idleReplicaCount`` set): scale to
  ``minReplicaCount`` (at least 1) unless ``paused-scale-out``; otherwise remember the time as
  ``lastActiveTime`` (a trigger error while active makes Ready Unknown instead);
- inactive: with an error and a fallback of non-zero replicas, leave it to the HPA's fallback;
  with an error and no fallback, Ready=False; above idle (or above 0 with min 0), scale to
  ``idleReplicaCount`` / ``minReplicaCount`` once ``cooldownPeriod`` has passed since
  ``lastActiveTime`` (or ``initialCooldownPeriod`` since creation when never active), unless
  ``paused-scale-in``; meanwhile Active=False/ScalerCooldown; below min without idle, set min.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gpuplane.autoscaler.keda.formula import FormulaError, compile_formula
from gpuplane.autoscaler.keda.model import (
    FORCE_ACTIVATION_ANNOTATION,
    GO_FALSE,
    PAUSED_ANNOTATION,
    PAUSED_REPLICAS_ANNOTATION,
    PAUSED_SCALE_IN_ANNOTATION,
    PAUSED_SCALE_OUT_ANNOTATION,
    ScaledObjectIn,
)
from gpuplane.autoscaler.keda.scalers import ScalerPoll, external_metric_name
from gpuplane.autoscaler.keda.state import (
    READY,
    KedaCondition,
    KedaSettings,
    KedaState,
    set_condition,
)


@dataclass(frozen=True, slots=True)
class KedaSnapshot:
    """One poll: ``polls[i]`` is trigger i's result (None for cpu/memory, never polled)."""

    now_s: float
    scaled_object: ScaledObjectIn
    current_replicas: int
    polls: tuple[ScalerPoll | None, ...]
    created_s: float = 0.0
    state: KedaState = field(default_factory=KedaState)


@dataclass(frozen=True, slots=True)
class KedaDecision:
    """``scale_to`` is the replica count to write now, or None to leave the target alone."""

    scale_to: int | None
    active: bool
    error: bool
    active_triggers: tuple[str, ...]
    conditions: tuple[KedaCondition, ...]
    state: KedaState
    events: tuple[str, ...] = ()


def trigger_names(so: ScaledObjectIn) -> tuple[str, ...]:
    return tuple(t.name or f"{t.type}Scaler" for t in so.spec.triggers)


def _composite_active(so: ScaledObjectIn, polls: tuple[ScalerPoll | None, ...]) -> bool:
    """Activity recomputed from ``scalingModifiers`` (only called without trigger errors)."""
    sm = so.modifiers()
    assert sm is not None
    threshold = float(sm.activationTarget) if sm.activationTarget else 0.0
    values = {
        t.name: p.value_milli / 1000
        for t, p in zip(so.spec.triggers, polls, strict=True)
        if t.name and p is not None and p.value_milli is not None
    }
    try:
        formula = compile_formula(sm.formula, frozenset(t.name for t in so.spec.triggers if t.name))
        return formula.evaluate(values) > threshold
    except FormulaError:
        # KEDA logs the failure and compares each trigger's own metric instead.
        return any(v > threshold for v in values.values())


def scaled_object_state(
    so: ScaledObjectIn, polls: tuple[ScalerPoll | None, ...]
) -> tuple[bool, bool, tuple[str, ...]]:
    """``getScaledObjectState``: (active, any trigger errored, names of active triggers)."""
    names = trigger_names(so)
    active: list[str] = []
    error = False
    for name, poll in zip(names, polls, strict=True):
        if poll is None:
            continue
        if poll.error is not None:
            error = True
        elif poll.active:
            active.append(name)
    is_active = bool(active)
    if so.modifiers() is not None:
        active = []
        is_active = not error and _composite_active(so, polls)
        if is_active:
            active = ["ModifiersTrigger"]
    if all(t.type in ("cpu", "memory") for t in so.spec.triggers) and not error:
        is_active = True
    return is_active, error, tuple(active)


PAUSED = KedaCondition("Paused", "True", "ScaledObjectPaused", "ScaledObject is paused")


def _paused(so: ScaledObjectIn, current: int) -> tuple[int | None] | None:
    """None when not paused; else the replica count to set (``paused-replicas``), if any.

    ``autoscaling.keda.sh/paused-replicas: "N"`` pins the target at N; ``paused: "true"`` (any
    value that is not a Go false) stops scaling where it is.
    """
    notes = so.metadata.annotations
    pinned = notes.get(PAUSED_REPLICAS_ANNOTATION)
    if pinned is not None and pinned.strip().isdigit():
        count = int(pinned)
        return (None if current == count else count,)
    value = notes.get(PAUSED_ANNOTATION)
    if value is not None and value not in GO_FALSE:
        return (None,)
    return None


def _cooled_down(so: ScaledObjectIn, state: KedaState, now: float, created: float) -> bool:
    if state.last_active_s is None:
        return created + so.spec.initialCooldownPeriod < now
    return state.last_active_s + so.spec.cooldownPeriod < now


@dataclass
class _Step:
    """The scratch of one ``RequestScale``; never escapes :func:`decide`."""

    conditions: tuple[KedaCondition, ...]
    last_active: float | None
    scale_to: int | None = None
    events: tuple[str, ...] = ()

    def cond(self, kind: str, status: str, reason: str, message: str) -> None:
        self.conditions = set_condition(
            self.conditions, KedaCondition(kind, status, reason, message)
        )


def _active(
    step: _Step, snap: KedaSnapshot, error: bool, forced: bool, names: tuple[str, ...]
) -> None:
    so, current, now = snap.scaled_object, snap.current_replicas, snap.now_s
    minimum, idle = so.min_replicas(), so.spec.idleReplicaCount
    why = "activation is being forced by annotation" if forced else "triggers are active"
    step.cond("Active", "True", "ScalerActive", f"Scaling is performed because {why}")
    if (idle is not None and current < minimum) or current == 0:
        if PAUSED_SCALE_OUT_ANNOTATION not in so.metadata.annotations:
            step.scale_to = minimum if minimum > 0 else 1
            step.last_active = now
            by = ";".join(names)
            step.events = (
                f"KEDAScaleTargetActivated: Scaled from {current} to {step.scale_to}, "
                f"triggered by {by}",
            )
    elif error:
        step.cond(
            "Ready",
            "Unknown",
            "PartialTriggerError",
            "Some triggers defined in ScaledObject are not working correctly",
        )
    else:
        step.last_active = now


def _inactive(step: _Step, snap: KedaSnapshot, error: bool) -> None:
    so, current = snap.scaled_object, snap.current_replicas
    minimum, idle = so.min_replicas(), so.spec.idleReplicaCount
    step.cond(
        "Active",
        "False",
        "ScalerNotActive",
        "Scaling is not performed because triggers are not active",
    )
    fallback = so.spec.fallback
    if error and fallback is not None and fallback.replicas != 0:
        return  # the HPA falls back to fallback.replicas; scaling to 0 would switch it off
    if error and fallback is None:
        step.cond(
            "Ready",
            "False",
            "TriggerError",
            "Triggers defined in ScaledObject are not working correctly",
        )
    elif (idle is not None and current > idle) or (current > 0 and minimum == 0):
        if PAUSED_SCALE_IN_ANNOTATION in so.metadata.annotations:
            return
        if _cooled_down(so, snap.state, snap.now_s, snap.created_s):
            step.scale_to = idle if idle is not None else minimum
            step.events = (
                f"KEDAScaleTargetDeactivated: Deactivated from {current} to {step.scale_to}",
            )
        else:
            step.cond(
                "Active",
                "False",
                "ScalerCooldown",
                "Scaler cooling down because triggers are not active",
            )
    elif idle is None and current < minimum:
        step.scale_to = minimum


def _cache(snap: KedaSnapshot, settings: KedaSettings) -> dict[str, ScalerPoll]:
    """Remember the polls of ``useCachedMetrics`` triggers for the HPA's next query."""
    cache = dict(snap.state.cache)
    if not settings.metrics_server_poll_uses_cache:
        return cache
    so = snap.scaled_object
    for i, (trigger, poll) in enumerate(zip(so.spec.triggers, snap.polls, strict=True)):
        name = external_metric_name(trigger, i)
        if trigger.useCachedMetrics and poll is not None and name is not None:
            cache[name] = poll
    return cache


def decide(snapshot: KedaSnapshot, settings: KedaSettings) -> KedaDecision:
    """``RequestScale`` after ``getScaledObjectState``."""
    so = snapshot.scaled_object
    if len(snapshot.polls) != len(so.spec.triggers):
        raise ValueError(f"{len(snapshot.polls)} polls for {len(so.spec.triggers)} triggers")
    state = replace(snapshot.state, cache=_cache(snapshot, settings))
    active, error, names = scaled_object_state(so, snapshot.polls)
    step = _Step(set_condition(state.conditions, READY), state.last_active_s)
    paused = _paused(so, snapshot.current_replicas)
    forced = so.annotation_true(FORCE_ACTIVATION_ANNOTATION)
    if paused is not None:
        step.conditions = set_condition(step.conditions, PAUSED)
        step.scale_to = paused[0]
    elif active or forced:
        _active(step, snapshot, error, forced, names)
    else:
        _inactive(step, snapshot, error)
    new_state = replace(state, last_active_s=step.last_active, conditions=step.conditions)
    return KedaDecision(
        step.scale_to, active or forced, error, names, step.conditions, new_state, step.events
    )
