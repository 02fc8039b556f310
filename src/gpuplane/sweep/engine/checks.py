"""What every base does with its input, once: read its settings with errors at the sweep file's
field, check one knob's value against them, tell another reader's error at a sweep field, and
take a figure out of a run's answer by path."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from gpuplane.core.errors import InputError, Location
from gpuplane.core.validation import validate_model
from gpuplane.sweep.engine.paths import get_path
from gpuplane.sweep.engine.point import Cell, Value

M = TypeVar("M", bound=BaseModel)


def _at(exc: InputError, field: str) -> InputError:
    return InputError(exc.problem, expected=exc.expected, location=Location(field=field))


def settings_at(model: type[M], data: Any, where: str) -> M:
    """``data`` read as ``model``; a mistake is told at ``where.FIELD`` (``base.fit.profile``)."""
    try:
        return validate_model(model, data if data is not None else {})
    except InputError as exc:
        raise _at(exc, f"{where}.{exc.location.field}" if exc.location.field else where) from None


def with_knob(settings: M, name: str, value: Value, field: str, **fixed: Any) -> M:
    """``settings`` with knob ``name`` at ``value``, checked as the base's settings are; a
    mistake is told at ``field`` (``parameters.seed.values[2]``). ``fixed``: settings to
    override for the check (a folder the check must not look at again)."""
    data = {**settings.model_dump(), **fixed, name: value}
    try:
        return validate_model(type(settings), data)
    except InputError as exc:
        raise _at(exc, field) from None


def relocated(exc: InputError, field: str, what: str) -> InputError:
    """Another reader's error (the scenario loader's, fit's) about ``what``, told at the sweep
    file's ``field``; the reader's own place stays in the text."""
    where = exc.location.render()
    problem = f"{what} is refused: " + (f"{where}: " if where else "") + exc.problem
    return InputError(problem, expected=exc.expected, location=Location(field=field))


def figure_at(data: Any, name: str, index: int, what: str, example: str) -> Cell:
    """Figure ``name`` (a path) of ``data``: a number, a text, a flag or nothing; a mapping or a
    list is a mistake told at ``figures[index]``."""
    value = get_path(data, name, f"figures[{index}]")
    if isinstance(value, dict | list):
        raise InputError(
            f"{name!r} is a {type(value).__name__} in {what}",
            expected=f"a path to a number, e.g. {example}",
            location=Location(field=f"figures[{index}]"),
        )
    return value  # type: ignore[no-any-return]


def no_knob(
    base: str, name: str, knobs: tuple[str, ...], where: str, targets: str = ""
) -> InputError:
    """The error for parameter ``name`` that is none of the base's knobs (``targets``: the
    other targets it takes, in words, e.g. "path: a scenario field")."""
    others = f"{targets}, or one of " if targets else "one of "
    return InputError(
        f"the {base} base has no knob {name!r}",
        expected=others + ", ".join(knobs),
        location=Location(field=where),
    )
