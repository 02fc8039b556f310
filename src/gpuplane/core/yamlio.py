"""YAML with line numbers, and pydantic errors turned into located InputErrors.

Every user file gpuplane reads (scenarios, hardware descriptions, configs) goes through here, so
every mistake is reported as ``file:line: field.path: problem; expected ...``.
"""

from __future__ import annotations

from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from gpuplane.core.errors import InputError, Location

Path_ = tuple[str | int, ...]
M = TypeVar("M", bound=BaseModel)


class _LineLoader(yaml.SafeLoader):
    """A safe loader that remembers the line of every mapping key and sequence item."""


def _walk(node: yaml.Node, path: Path_, lines: dict[Path_, int]) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node)
            lines[(*path, key)] = key_node.start_mark.line + 1
            _walk(value_node, (*path, key), lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*path, i), lines)


def load_yaml(text: str, source: str) -> tuple[Any, dict[Path_, int]]:
    """Parse ``text``; return the data and a map from field path to 1-based line."""
    try:
        node = yaml.compose(text, Loader=_LineLoader)
        data = yaml.load(text, Loader=_LineLoader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark
        line = mark.line + 1 if mark is not None else None
        raise InputError(
            f"not valid YAML: {err.problem}",
            expected="YAML syntax",
            location=Location(source=source, line=line),
        ) from None
    except yaml.YAMLError as err:
        raise InputError(f"not valid YAML: {err}", location=Location(source=source)) from None
    lines: dict[Path_, int] = {}
    if node is not None:
        _walk(node, (), lines)
    return data, lines


def field_path(loc: Path_) -> str:
    """``("workloads", 3, "spec")`` -> ``workloads[3].spec``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def line_of(lines: dict[Path_, int], loc: Path_) -> int | None:
    """The line of the deepest prefix of ``loc`` that the file has."""
    for cut in range(len(loc), -1, -1):
        line = lines.get(tuple(loc[:cut]))
        if line is not None:
            return line
    return None


def _clean_loc(loc: tuple[Any, ...]) -> Path_:
    # pydantic inserts the union member / tag names into locations; keep only real path parts.
    return tuple(
        p for p in loc if isinstance(p, int) or not str(p).startswith(("function-", "union["))
    )


def located_validation_error(
    err: ValidationError, source: str, lines: dict[Path_, int], prefix: Path_ = ()
) -> InputError:
    first = err.errors()[0]
    loc = (*prefix, *_clean_loc(tuple(first["loc"])))
    msg = str(first["msg"])
    problem = msg
    if first["type"] == "extra_forbidden":
        problem = "unknown field (not part of this format)"
    elif first["type"] == "missing":
        problem = "required field is missing"
    elif "input" in first and first["type"] not in ("model_type",):
        problem = f"{msg} (got {first['input']!r})"
    more = len(err.errors()) - 1
    if more:
        problem += f" (and {more} more problem{'s' if more > 1 else ''})"
    return InputError(
        problem, location=Location(source=source, line=line_of(lines, loc), field=field_path(loc))
    )


def validate_yaml(model: type[M], text: str, source: str) -> M:
    """Parse YAML ``text`` and validate it as ``model``; any mistake is a located InputError."""
    data, lines = load_yaml(text, source)
    if data is None:
        raise InputError(
            "the file is empty",
            expected=f"a {model.__name__} document",
            location=Location(source=source),
        )
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise located_validation_error(err, source, lines) from None
