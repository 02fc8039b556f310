"""Pydantic validation errors in words a user can act on, with the field path.

Used for every user file: the first problem (unknown keys first, since a typo also makes a
required key "missing"), the field path without pydantic's union tags, close matches for a
misspelt key, and what was expected. The caller adds the file and line.
"""

from __future__ import annotations

import difflib
import json
import math
import types
from collections.abc import Iterable
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from gpuplane.core.errors import InputError, InputErrors, Location

M = TypeVar("M", bound=BaseModel)


def field_path(loc: tuple[int | str, ...]) -> str:
    """``("workloads", 3, "spec")`` -> ``workloads[3].spec``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


_YAML_WORDS = {"a valid array": "a valid list", "an object": "a valid dictionary"}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe_error(root: type[BaseModel], error: Any) -> tuple[str, str | None]:
    """(problem, expected) in words a user can act on, from one pydantic error."""
    loc, kind, msg = tuple(error["loc"]), error["type"], str(error["msg"])
    if kind == "missing":
        model = model_at(root, loc[:-1])
        info = model.model_fields.get(str(loc[-1])) if model is not None else None
        return f"required key {loc[-1]!r} is missing", (
            f"{loc[-1]}: {info.description}" if info and info.description else None
        )
    if kind in ("extra_forbidden", "model_type"):
        model = model_at(root, loc if kind == "model_type" else loc[:-1])
        keys = ", ".join(model.model_fields) if model is not None else None
        if kind == "extra_forbidden":
            return f"unknown key {loc[-1]!r}", (f"one of {keys}" if keys else None)
        return f"got {_short(error['input'])}", (f"a mapping with keys {keys}" if keys else None)
    if msg.startswith("Input should be "):
        expected = msg.removeprefix("Input should be ")
        # The files are YAML: JSON's "array"/"object" are a list and a mapping there.
        expected = _YAML_WORDS.get(expected, expected)
        return f"got {_short(error['input'])}", expected
    return msg.removeprefix("Value error, "), None


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


def _one_error(model: type[BaseModel], error: Any) -> InputError:
    loc = clean_loc(model, tuple(error["loc"]))
    field = field_path(loc)
    if error["type"] == "extra_forbidden":
        out = unknown_key_error(model_at(model, loc[:-1]), str(loc[-1]), field)
        problem, expected = out.problem, out.expected
        if getattr(model, "strict_decoding", False):
            # A Kubernetes object: the API server's strict decoding names the whole path.
            problem = f'unknown field "{field}"'
    elif error["type"] == "model_type":
        owner = model_at(model, loc)
        keys = ", ".join(valid_keys(owner)) if owner is not None else None
        problem = f"got {error['input']!r:.60}"
        expected = f"a mapping with keys {keys}" if keys else "a mapping"
    else:
        problem, expected = describe_error(model, error)
    return InputError(problem, expected=expected, location=Location(field=field or None))


def _sorted_errors(err: ValidationError) -> list[Any]:
    # Unknown keys first: a typo also makes a required key "missing".
    return sorted(err.errors(include_url=False), key=lambda e: e["type"] != "extra_forbidden")


def first_error(model: type[BaseModel], err: ValidationError) -> InputError:
    """The first problem of ``err`` (unknown keys first: a typo also makes a key "missing")."""
    out = _one_error(model, _sorted_errors(err)[0])
    if err.error_count() > 1:
        problem = out.problem + f" (first of {err.error_count()} problems)"
        return InputError(problem, expected=out.expected, location=out.location)
    return out


def all_errors(model: type[BaseModel], err: ValidationError) -> list[InputError]:
    """Every problem of ``err``, unknown keys first (``gpuplane validate`` shows them all)."""
    return [_one_error(model, e) for e in _sorted_errors(err)]


def _non_finite(data: object, loc: tuple[int | str, ...] = ()) -> tuple[int | str, ...] | None:
    """Where the first NaN or infinity in ``data`` is (a YAML ``.inf``/``.nan``)."""
    if isinstance(data, float) and not math.isfinite(data):
        return loc
    items: Iterable[tuple[int | str, object]] = ()
    if isinstance(data, dict):
        items = ((str(k), v) for k, v in data.items())
    elif isinstance(data, list | tuple):
        items = enumerate(data)
    for key, value in items:
        found = _non_finite(value, (*loc, key))
        if found is not None:
            return found
    return None


def validate_model(model: type[M], data: object, *, every: bool = False) -> M:
    """``data`` (parsed YAML/JSON) validated as ``model`` the way a typed decoder reads a file.

    Strict JSON mode, so a scalar must already have its type: ``count: true`` or ``"3"`` for a
    number are errors, not 1 and 3 (a JSON/YAML boolean or string is never a number to the API
    server's decoder either); enums and nested models read their JSON form. Infinity and NaN
    (YAML ``.inf``, ``.nan``) have no JSON form, so no user file may carry them. A
    ValidationError becomes an InputError with a field path (``every``: an InputErrors with
    all of them).
    """
    _refuse_alias_expansion(data)
    try:
        text = json.dumps(data, allow_nan=False, default=str)
    except ValueError:
        loc = _non_finite(data) or ()
        raise InputError(
            f"got {_short(_at(data, loc))}",
            expected="a finite number",
            location=Location(field=field_path(loc) or None),
        ) from None
    try:
        return model.model_validate_json(text, strict=True)
    except ValidationError as err:
        if every:
            raise InputErrors(all_errors(model, err)) from None
        raise first_error(model, err) from None


# YAML aliases share one parsed object among all the places that name it; written out (as the
# JSON the typed decoder reads) each place is a copy. A "billion laughs" file of a few hundred
# bytes expands to hundreds of millions of values: refuse more than this many copied values.
MAX_ALIAS_EXPANSION = 1_000_000


def _refuse_alias_expansion(data: object) -> None:
    """Refuse ``data`` whose shared (aliased) parts would be copied more than
    MAX_ALIAS_EXPANSION values when written out. Linear in the distinct objects."""
    sizes: dict[int, int] = {}
    written = 1  # the values as the file writes them: the root, and each container's items once

    def size(value: object) -> int:
        nonlocal written
        if not isinstance(value, dict | list):
            return 1
        known = sizes.get(id(value))
        if known is not None:
            return known
        children = list(value.values() if isinstance(value, dict) else value)
        written += len(children)
        total = 1 + sum(size(child) for child in children)
        sizes[id(value)] = total
        return total

    expanded = size(data)  # nesting is bounded (MAX_JSON_DEPTH) before any data gets here
    if expanded - written > MAX_ALIAS_EXPANSION:
        raise InputError(
            f"YAML aliases expand the document to {expanded:,} values",
            expected=f"at most {MAX_ALIAS_EXPANSION:,} values copied through aliases (*name)",
        )


def _at(data: object, loc: tuple[int | str, ...]) -> object:
    for key in loc:
        if isinstance(data, dict):
            data = next(v for k, v in data.items() if str(k) == key)
        elif isinstance(data, list | tuple) and isinstance(key, int):
            data = data[key]
    return data
