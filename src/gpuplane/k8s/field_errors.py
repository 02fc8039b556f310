"""Turn pydantic validation errors and relative field paths into located InputErrors.

Manifests use camelCase aliases, so the valid keys listed for an unknown key are the aliases, and
only the close ones are offered (``difflib``) because a PodSpec has over forty fields.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel

from gpuplane.core.errors import InputError, Location
from gpuplane.core.validation import (
    clean_loc,
    first_error,
    model_at,
    unknown_key_error,
    valid_keys,
    validate_model,
)

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


__all__ = [
    "LineOf",
    "clean_loc",
    "fail",
    "first_error",
    "join_path",
    "model_at",
    "relocate",
    "unknown_key_error",
    "valid_keys",
    "validate_model",
]
