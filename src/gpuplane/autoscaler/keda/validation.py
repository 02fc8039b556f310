"""A ScaledObject from a plain dict (a parsed manifest) to a validated model, with the checks
KEDA's admission webhook and controller make (``scaledobject_types.go``,
``scaledobject_webhook.go``, ``pkg/scaling/cache``), each error located at its field and, when a
``LineIndex`` of the YAML is given, its line:

- ``minReplicaCount`` <= ``maxReplicaCount``; ``idleReplicaCount`` < ``minReplicaCount`` (KEDA
  compares against the HPA's floor, so ``minReplicaCount: 0`` counts as 1 there);
- every trigger is one gpuplane models, with valid metadata; names are unique;
- ``scalingModifiers`` need a formula and a positive target, and the formula must compile with
  the trigger names as variables;
- a fallback needs a trigger that is not cpu/memory; ``behavior: scalingModifiers`` needs
  scalingModifiers.
"""

from __future__ import annotations

import math

from gpuplane.autoscaler.keda.formula import FormulaError, compile_formula, formula_input_error
from gpuplane.autoscaler.keda.model import ScaledObjectIn
from gpuplane.autoscaler.keda.scalers import build_scaler
from gpuplane.core.errors import InputError, Location
from gpuplane.core.validation import validate_model
from gpuplane.core.yamlio import LazyLineIndex, LineIndex


def _fail(problem: str, field: str, expected: str | None = None) -> InputError:
    return InputError(problem, expected=expected, location=Location(field=field))


def _check_replica_counts(so: ScaledObjectIn) -> None:
    """``CheckReplicaCountBoundsAreValid``."""
    spec = so.spec
    low = so.hpa_min_replicas() if spec.minReplicaCount is not None else 0
    high = so.hpa_max_replicas()
    if low > high:
        raise _fail(
            f"MinReplicaCount={low} must be less than MaxReplicaCount={high}",
            "spec.minReplicaCount",
        )
    if spec.idleReplicaCount is not None and spec.idleReplicaCount >= low:
        raise _fail(
            f"IdleReplicaCount={spec.idleReplicaCount} must be less than MinReplicaCount={low}",
            "spec.idleReplicaCount",
        )


def _check_triggers(so: ScaledObjectIn) -> None:
    names: dict[str, int] = {}
    for i, trigger in enumerate(so.spec.triggers):
        build_scaler(trigger, i, None)
        if trigger.name:
            if trigger.name in names:
                raise _fail(
                    f"triggerName {trigger.name} is defined multiple times in the "
                    "ScaledObject, but it must be unique",
                    f"spec.triggers[{i}].name",
                )
            names[trigger.name] = i


def _number(text: str, field: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise _fail(
            f"error converting {what} for scalingModifiers (string->float) to valid target: "
            f"strconv.ParseFloat: parsing {text!r}: invalid syntax",
            field,
            expected="a number as a string",
        ) from None
    if not math.isfinite(value):
        raise _fail(f"scalingModifiers {what} {text!r} is not finite", field)
    return value


def _check_modifiers(so: ScaledObjectIn) -> None:
    sm = so.modifiers()
    if sm is None:
        return
    base = "spec.advanced.scalingModifiers"
    if not sm.formula:
        raise _fail("error ScalingModifiers.Formula is mandatory", f"{base}.formula")
    if not sm.target:
        raise _fail("error ScalingModifiers.Target is mandatory", f"{base}.target")
    if _number(sm.target, f"{base}.target", "target") <= 0:
        raise _fail(
            f"scalingModifiers target {sm.target!r} must be > 0",
            f"{base}.target",
            expected="a positive number: KEDA skips the composite metric otherwise",
        )
    if sm.activationTarget:
        _number(sm.activationTarget, f"{base}.activationTarget", "activationTarget")
    for i, trigger in enumerate(so.spec.triggers):
        if not trigger.name:
            raise _fail(
                "trigger name not given with compositeScaler",
                f"spec.triggers[{i}].name",
                expected="a name for every trigger, used as its variable in the formula",
            )
    names = frozenset(t.name for t in so.spec.triggers if t.name)
    try:
        compile_formula(sm.formula, names)
    except FormulaError as err:
        raise formula_input_error(err, f"{base}.formula") from None


def _check_fallback(so: ScaledObjectIn) -> None:
    fallback = so.spec.fallback
    if fallback is None:
        return
    if all(t.type in ("cpu", "memory") for t in so.spec.triggers):
        raise _fail(
            "at least one trigger (that is not cpu or memory) has to be defined to use fallback",
            "spec.fallback",
        )
    if fallback.behavior == "scalingModifiers" and so.modifiers() is None:
        raise _fail(
            "fallback behavior scalingModifiers needs advanced.scalingModifiers",
            "spec.fallback.behavior",
        )


def validate_scaled_object(so: ScaledObjectIn) -> ScaledObjectIn:
    """The cross-field rules; InputError with a field path."""
    _check_replica_counts(so)
    _check_triggers(so)
    _check_modifiers(so)
    _check_fallback(so)
    return so


def scaled_object_from_dict(
    data: object, index: LineIndex | LazyLineIndex | None = None, source: str | None = None
) -> ScaledObjectIn:
    """Validate a ScaledObject manifest (as parsed from YAML/JSON)."""
    try:
        return validate_scaled_object(validate_model(ScaledObjectIn, data))
    except InputError as err:
        field = err.location.field or ""
        line = index.line_of(field) if index is not None else err.location.line
        where = Location(source=source or err.location.source, line=line, field=field or None)
        raise InputError(err.problem, expected=err.expected, location=where) from None
