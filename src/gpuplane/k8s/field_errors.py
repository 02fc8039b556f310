"""Turn pydantic validation errors and relative field paths into located InputErrors.

Manifests use camelCase aliases, so the valid keys listed for an unknown key are the aliases, and
only the close ones are offered (``difflib``) because a PodSpec has over forty fields.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from gpuplane.core.errors import InputError, Location
from gpuplane.core.yamlio import describe_error, field_path

LineOf = Callable[[str], int | None]
M = TypeVar("M", bound=BaseModel)


def fail(problem: str, field: str, expected: str | None = None) -> InputError:
    """An InputError at ``field`` (relative to the object being read); the caller locates it."""
    return InputError(problem, expected=expected, location=Location(field=field))


def join_path(prefix: str, field: str) -> str:
    """``workloads[0].manifest`` + ``spec.replicas`` -> ``workloads[0].manifest.spec.replicas``."""
    if not prefix:
        return field
    if not field:
        return prefix
    return prefix + field if field.startswith("[") else f"{prefix}.{field}"


def relocate(err: InputError, source: str, line_of: LineOf, prefix: str = "") -> InputError:
    """``err`` (field relative to ``prefix``) placed in ``source`` at the field's line."""
    if err.location.source is not None:
        return err
    field = join_path(prefix, err.location.field or "")
    loc = Location(source, line_of(field), field or None)
    return InputError(err.problem, expected=err.expected, location=loc)


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if get_origin(annotation) is Annotated:
        return _inner_model(get_args(annotation)[0])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) in (list, dict, Union, types.UnionType):
        for arg in get_args(annotation):
            found = _inner_model(arg)
            if found is not None:
                return found
    return None


def _field_by_key(model: type[BaseModel], key: str) -> Any:
    for name, info in model.model_fields.items():
        if (info.alias or name) == key:
            return info
    return None


def _union_members(annotation: Any) -> list[type[BaseModel]]:
    """Every model reachable through lists, dicts, unions and Annotated in ``annotation``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    args = get_args(annotation)
    if get_origin(annotation) is Annotated:
        args = args[:1]
    return [m for a in args for m in _union_members(a)]


def _tag_member(annotation: Any, tag: str) -> type[BaseModel] | None:
    """The member of a discriminated union whose Literal discriminator is ``tag``."""
    for member in _union_members(annotation):
        for info in member.model_fields.values():
            if get_origin(info.annotation) is Literal and tag in get_args(info.annotation):
                return member
    return None


def clean_loc(root: type[BaseModel], loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """``loc`` without the tags pydantic adds for discriminated unions (``faults[0].node-lost``)."""
    out: list[int | str] = []
    model: type[BaseModel] | None = root
    annotation: Any = None
    for part in loc:
        if isinstance(part, str):
            info = _field_by_key(model, part) if model is not None else None
            if info is None and annotation is not None:
                member = _tag_member(annotation, part)
                if member is not None:
                    model, annotation = member, None
                    continue
            if info is not None:
                annotation = info.annotation
                model = _inner_model(annotation)
        out.append(part)
    return tuple(out)


def model_at(root: type[BaseModel], loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The model describing the value at ``loc`` (keys are aliases; indexes are skipped)."""
    model = root
    for part in loc:
        info = _field_by_key(model, str(part)) if isinstance(part, str) else None
        if info is None:
            continue  # a list index, a dict key or a union tag
        inner = _inner_model(info.annotation)
        if inner is None:
            return None
        model = inner
    return model


def valid_keys(model: type[BaseModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def unknown_key_error(owner: type[BaseModel] | None, key: str, field: str) -> InputError:
    keys = valid_keys(owner) if owner is not None else []
    close = difflib.get_close_matches(key, keys, n=3, cutoff=0.6)
    problem = f"unknown key {key!r}"
    if owner is not None:
        problem += f" (not a field of {owner.__name__})"
    if close:
        expected: str | None = " or ".join(close)
    else:
        expected = f"one of {', '.join(keys)}" if keys else None
    return InputError(problem, expected=expected, location=Location(field=field))


def first_error(model: type[BaseModel], err: ValidationError) -> InputError:
    """The first problem of ``err`` (unknown keys first: a typo also makes a key "missing")."""
    errors = sorted(err.errors(include_url=False), key=lambda e: e["type"] != "extra_forbidden")
    first = errors[0]
    loc = clean_loc(model, tuple(first["loc"]))
    field = field_path(loc)
    if first["type"] == "extra_forbidden":
        out = unknown_key_error(model_at(model, loc[:-1]), str(loc[-1]), field)
        problem, expected = out.problem, out.expected
    elif first["type"] == "model_type":
        owner = model_at(model, loc)
        keys = ", ".join(valid_keys(owner)) if owner is not None else None
        problem = f"got {first['input']!r:.60}"
        expected = f"a mapping with keys {keys}" if keys else "a mapping"
    else:
        problem, expected = describe_error(model, first)
    if err.error_count() > 1:
        problem += f" (first of {err.error_count()} problems)"
    return InputError(problem, expected=expected, location=Location(field=field or None))


def validate_model(model: type[M], data: object) -> M:
    """``model.model_validate(data)``; a ValidationError becomes an InputError with a field."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise first_error(model, err) from None
