"""YAML with line numbers, and validation errors turned into located InputErrors.

Every user file gpuplane reads (scenarios, hardware descriptions, the GPU catalog) goes through
:func:`validate_yaml`, so every mistake is reported as ``file:line: field.path: problem; expected
...``. Beyond PyYAML's safe loader this rejects duplicate keys (PyYAML silently keeps the last),
keeps ``2024-05-01`` a string rather than a date, survives recursive aliases, and names the valid
keys when a key is unknown.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel

from gpuplane.core.errors import InputError, Location
from gpuplane.core.validation import field_path, validate_model

M = TypeVar("M", bound=BaseModel)

__all__ = ["LineIndex", "field_path", "parse_yaml", "validate_yaml"]

# The last component of a field path: ".key", "[3]" or a bare top-level key.
_LAST_PART = re.compile(r"(\.[^.\[\]]*|\[\d+\]|[^.\[\]]+)$")


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
        return validate_model(model, data)
    except InputError as err:
        field = err.location.field or ""
        loc = Location(source, index.line_of(field), field or None)
        raise InputError(err.problem, expected=err.expected, location=loc) from None
