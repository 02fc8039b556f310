"""YAML with line numbers, and validation errors turned into located InputErrors.

Every user file gpuplane reads (scenarios, hardware descriptions, the GPU catalog) goes through
:func:`validate_yaml`, so every mistake is reported as ``file:line: field.path: problem; expected
...``. Beyond PyYAML's safe loader this rejects duplicate keys (PyYAML silently keeps the last),
keeps ``2024-05-01`` a string rather than a date, survives recursive aliases, and names the valid
keys when a key is unknown.
"""

from __future__ import annotations

import re
import types
from typing import Any, TypeVar, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from gpuplane.core.errors import InputError, Location

M = TypeVar("M", bound=BaseModel)

# The last component of a field path: ".key", "[3]" or a bare top-level key.
_LAST_PART = re.compile(r"(\.[^.\[\]]*|\[\d+\]|[^.\[\]]+)$")


def field_path(loc: tuple[int | str, ...]) -> str:
    """``("workloads", 3, "spec")`` -> ``workloads[3].spec``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class LineIndex:
    """1-based line of every field path in a YAML node tree; also rejects duplicate keys."""

    def __init__(self, root: yaml.Node, source: str) -> None:
        self.lines: dict[str, int] = {}
        self.source = source
        self._seen: set[int] = set()
        self._walk(root, "")

    def _walk(self, node: yaml.Node, path: str) -> None:
        self.lines.setdefault(path, node.start_mark.line + 1)
        # An alias reuses its anchor's node and may even contain itself (``&a [*a]``): walk each
        # node once; paths below an alias then fall back to the alias's own line.
        if id(node) in self._seen:
            return
        self._seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: set[str] = set()
            for key_node, value_node in node.value:
                key = str(key_node.value)
                child = f"{path}.{key}" if path else key
                if key in keys and key != "<<":
                    loc = Location(self.source, key_node.start_mark.line + 1, child)
                    raise InputError(
                        f"duplicate key {key!r}", expected="each key once", location=loc
                    )
                keys.add(key)
                self.lines[child] = key_node.start_mark.line + 1
                self._walk(value_node, child)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                self._walk(item, f"{path}[{i}]")

    def line_of(self, field: str) -> int | None:
        """The line of ``field``, or of its nearest ancestor present in the file."""
        while field and field not in self.lines:
            shorter = _LAST_PART.sub("", field)
            field = shorter if shorter != field else ""
        return self.lines.get(field)


class _Loader(yaml.SafeLoader):
    """SafeLoader without YAML 1.1's implicit dates: ``name: 2024-05-01`` stays a string."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def parse_yaml(text: str, source: str) -> tuple[yaml.Node | None, Any]:
    """The node tree and the data of one YAML document; syntax errors are located InputErrors."""
    loader: _Loader | None = None
    try:
        loader = _Loader(text)
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = "; ".join(p for p in (err.context, err.problem) if p) or str(err)
        # PyYAML's own wording often already says what it expected ("expected ',' or '}'").
        expected = None if "expected" in problem else "valid YAML"
        raise InputError(
            f"YAML syntax error: {problem}", expected=expected, location=Location(source, line)
        ) from None
    except yaml.reader.ReaderError as err:  # a control character or bad encoding
        line = text.count("\n", 0, err.position) + 1
        raise InputError(
            f"YAML error: {err.reason}", expected="printable text", location=Location(source, line)
        ) from None
    except (yaml.YAMLError, ValueError, RecursionError) as err:
        # ValueError: an explicit ``!!timestamp 2024-13-45``; RecursionError: absurd nesting.
        raise InputError(
            f"YAML error: {err}", expected="valid YAML", location=Location(source)
        ) from None
    finally:
        if loader is not None:
            loader.dispose()


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) in (list, dict, Union, types.UnionType):
        for arg in get_args(annotation):
            found = _inner_model(arg)
            if found is not None:
                return found
    return None


def _model_at(root: type[BaseModel], loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The pydantic model that describes the value at ``loc`` (lists, dicts, None unwrapped)."""
    model = root
    for part in loc:
        info = model.model_fields.get(str(part))
        if info is None:
            # A list index or a free-form dict key: stay on the model of the container's items.
            continue
        inner = _inner_model(info.annotation)
        if inner is None:
            return None
        model = inner
    return model


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe_error(root: type[BaseModel], error: Any) -> tuple[str, str | None]:
    """(problem, expected) in words a user can act on, from one pydantic error."""
    loc, kind, msg = tuple(error["loc"]), error["type"], str(error["msg"])
    if kind == "missing":
        model = _model_at(root, loc[:-1])
        info = model.model_fields.get(str(loc[-1])) if model is not None else None
        return f"required key {loc[-1]!r} is missing", (
            f"{loc[-1]}: {info.description}" if info and info.description else None
        )
    if kind in ("extra_forbidden", "model_type"):
        model = _model_at(root, loc if kind == "model_type" else loc[:-1])
        keys = ", ".join(model.model_fields) if model is not None else None
        if kind == "extra_forbidden":
            return f"unknown key {loc[-1]!r}", (f"one of {keys}" if keys else None)
        return f"got {_short(error['input'])}", (f"a mapping with keys {keys}" if keys else None)
    if msg.startswith("Input should be "):
        return f"got {_short(error['input'])}", msg.removeprefix("Input should be ")
    return msg.removeprefix("Value error, "), None


def validate_yaml(model: type[M], text: str, source: str, *, what: str | None = None) -> M:
    """Parse YAML ``text`` and validate it as ``model``; any mistake is a located InputError.

    Validators may raise InputError with a ``field`` (cross-checks); its line is filled in here.
    """
    node, data = parse_yaml(text, source)
    if node is None or data is None:
        raise InputError(
            "the file is empty",
            expected=what or f"a {model.__name__} document",
            location=Location(source, 1),
        )
    index = LineIndex(node, source)
    try:
        return model.model_validate(data)
    except ValidationError as err:
        # An unknown key is usually a typo that also makes a required key "missing": name it first.
        errors = sorted(err.errors(include_url=False), key=lambda e: e["type"] != "extra_forbidden")
        first = errors[0]
        field = field_path(tuple(first["loc"]))
        problem, expected = describe_error(model, first)
        if err.error_count() > 1:
            problem += f" (first of {err.error_count()} problems)"
        loc = Location(source, index.line_of(field), field or None)
        raise InputError(problem, expected=expected, location=loc) from None
    except InputError as err:
        field = err.location.field or ""
        loc = Location(source, index.line_of(field), field or None)
        raise InputError(err.problem, expected=err.expected, location=loc) from None
