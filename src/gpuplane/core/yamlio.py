"""YAML with line numbers, and validation errors turned into located InputErrors.

Every user file gpuplane reads (scenarios, hardware descriptions, the GPU catalog) goes through
:func:`validate_yaml`, so every mistake is reported as ``file:line: field.path: problem; expected
...``. Beyond PyYAML's safe loader this rejects duplicate keys (PyYAML silently keeps the last),
keeps ``2024-05-01`` a string rather than a date, refuses recursive aliases (``&a [*a]``: data
nothing can write back) and names the valid keys when a key is unknown.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel

from gpuplane.core.errors import InputError, Location
from gpuplane.core.nesting import MAX_JSON_DEPTH, check_json_depth
from gpuplane.core.textio import read_named_file
from gpuplane.core.validation import field_path, validate_model

M = TypeVar("M", bound=BaseModel)

__all__ = [
    "LazyLineIndex",
    "LineIndex",
    "field_path",
    "load_fast",
    "parse_yaml",
    "reject_recursive_aliases",
    "validate_yaml",
]

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


def _short(path: str) -> str | None:
    return (path[:60] + "...") if len(path) > 60 else (path or None)


def reject_recursive_aliases(root: yaml.Node, source: str | None) -> None:
    """Refuse an alias inside its own anchor (``&m {self: *m}``) and nesting past MAX_JSON_DEPTH.

    PyYAML builds a recursive alias as a self-containing dict, which nothing downstream can walk
    or write (json: "Circular reference detected"), so it is refused here, before anything runs.
    The walk is iterative; the depth bound keeps the recursive walkers after it (the line index,
    pydantic, the writers) far from Python's recursion limit.
    """
    on_path: set[int] = set()
    done: set[int] = set()
    # (node, field path, line of the key or item that leads to it, depth, leaving?)
    start = (root, "", root.start_mark.line + 1, 0, False)
    stack: list[tuple[yaml.Node, str, int, int, bool]] = [start]
    while stack:
        node, path, line, depth, leaving = stack.pop()
        if leaving:
            on_path.discard(id(node))
            done.add(id(node))
            continue
        if depth > MAX_JSON_DEPTH:
            raise InputError(
                f"nested more than {MAX_JSON_DEPTH} levels deep",
                expected=f"at most {MAX_JSON_DEPTH} nested mappings and lists",
                location=Location(source, node.start_mark.line + 1, _short(path)),
            )
        if id(node) in on_path:
            raise InputError(
                f"recursive alias: {path or 'the document'} refers to an anchor that contains it",
                expected="aliases (*name) only to anchors (&name) outside themselves",
                location=Location(source, line, path or None),
            )
        if id(node) in done:
            continue
        on_path.add(id(node))
        stack.append((node, path, line, depth, True))
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in reversed(node.value):
                key = str(key_node.value)
                child = f"{path}.{key}" if path else key
                stack.append((value_node, child, key_node.start_mark.line + 1, depth + 1, False))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in reversed(list(enumerate(node.value))):
                stack.append((item, f"{path}[{i}]", item.start_mark.line + 1, depth + 1, False))


def parse_yaml(text: str, source: str) -> tuple[yaml.Node | None, Any]:
    """The node tree and the data of one YAML document; syntax errors are located InputErrors."""
    loader: _Loader | None = None
    _refuse_deep_nesting(text, source)
    try:
        loader = _Loader(text)
        node = loader.get_single_node()
        if node is not None:
            reject_recursive_aliases(node, source)
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
    except RecursionError:
        # PyYAML composes recursively: absurd nesting fails there, where the reader stopped.
        line = loader.line + 1 if loader is not None else None
        raise InputError(
            f"nested more than {MAX_JSON_DEPTH} levels deep",
            expected=f"at most {MAX_JSON_DEPTH} nested mappings and lists",
            location=Location(source, line),
        ) from None
    except (yaml.YAMLError, ValueError) as err:
        # ValueError: an explicit ``!!timestamp 2024-13-45``.
        raise InputError(
            f"YAML error: {err}", expected="valid YAML", location=Location(source)
        ) from None
    finally:
        if loader is not None:
            loader.dispose()


def _refuse_deep_nesting(text: str, source: str) -> None:
    """Refuse nesting past MAX_JSON_DEPTH from libyaml's event stream, before the pure-Python
    scanner and composer (which take seconds on a 5,000-deep flow list before the depth check
    on the node tree can run). Any syntax error is left to ``parse_yaml``'s located message."""
    c_loader = getattr(yaml, "CSafeLoader", None)
    if c_loader is None or text.count("[") + text.count("{") + text.count("\n-") <= MAX_JSON_DEPTH:
        return  # without libyaml, or too few openers to be that deep: the tree check suffices
    depth, deep_at = 0, None
    try:
        for event in yaml.parse(text, Loader=c_loader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_JSON_DEPTH:
                    mark = event.start_mark
                    deep_at = mark.line + 1 if mark is not None else 0
                    break
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.MarkedYAMLError as err:
        # libyaml's scanner stops at its own flow-nesting limit before emitting the events.
        if "nesting depth" not in (err.problem or ""):
            return
        mark = err.problem_mark
        deep_at = mark.line + 1 if mark is not None else 0
    except (yaml.YAMLError, ValueError):
        return
    if deep_at is not None:
        raise InputError(
            f"nested more than {MAX_JSON_DEPTH} levels deep",
            expected=f"at most {MAX_JSON_DEPTH} nested mappings and lists",
            location=Location(source, deep_at or None),
        )


def read_yaml_document(path: Path, what: str) -> tuple[Any, LineIndex]:
    """One non-empty YAML document from a user's file (``what``: "scenario") and its line index;
    every failure a located InputError."""
    source = str(path)
    node, data = parse_yaml(read_named_file(path, f"{what} YAML file"), source)
    if node is None or data is None:
        raise InputError(
            "the file is empty", expected=f"a {what} document", location=Location(source, 1)
        )
    return data, LineIndex(node, source)


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


# ----- large inputs: cluster dumps and snapshots -----
# Dumps of real clusters run to hundreds of megabytes. They are parsed by libyaml (PyYAML's C
# loader, when installed) or ``json`` without a node tree; the line index is built only when a
# message needs a line. Any syntax error is re-read by ``parse_yaml`` so its message and line are
# exactly the ones every other file gets.
_CBase: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _FastLoader(_CBase):  # type: ignore[misc]
    """The C loader with ``_Loader``'s resolvers, rejecting duplicate keys as it builds maps."""


_FastLoader.yaml_implicit_resolvers = _Loader.yaml_implicit_resolvers


def _fast_mapping(loader: Any, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    keys: set[Any] = set()
    for key_node, _ in node.value:
        key = key_node.value
        if key in keys and key != "<<":
            loc = Location(getattr(loader, "_gp_source", None), key_node.start_mark.line + 1)
            raise InputError(f"duplicate key {key!r}", expected="each key once", location=loc)
        keys.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


_FastLoader.construct_mapping = _fast_mapping


class LazyLineIndex:
    """A ``LineIndex`` built on first use, for text parsed without a node tree."""

    def __init__(self, text: str, source: str, first_line: int = 1) -> None:
        self.source = source
        self._text = text
        self._pad = first_line - 1
        self._index: LineIndex | None = None

    def line_of(self, field: str) -> int | None:
        if self._index is None:
            node, _ = parse_yaml("\n" * self._pad + self._text, self.source)
            if node is None:
                return None
            self._index = LineIndex(node, self.source)
        return self._index.line_of(field)


class DuplicateKeyError(ValueError):
    """A JSON object names ``key`` twice (raised by :func:`unique_pairs`)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"duplicate key {key!r}")
        self.key = key


def unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``' ``object_pairs_hook`` that refuses a key given twice (the standard
    library keeps the last silently)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(key)
        out[key] = value
    return out


def load_fast(text: str, source: str, *, first_line: int = 1) -> Any:
    """The data of one document, fast; errors are located as :func:`parse_yaml` locates them."""
    stripped = text.lstrip()
    try:
        if stripped[:1] in ("{", "["):
            check_json_depth(text, source)
            try:
                return json.loads(text, object_pairs_hook=unique_pairs)
            except ValueError:
                pass  # not JSON after all, or a duplicate key: YAML says where
        loader = _FastLoader(text)
        loader._gp_source = source
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            reject_recursive_aliases(node, source)
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except InputError as err:
        if err.location.line is not None and first_line > 1:
            loc = Location(source, err.location.line + first_line - 1, err.location.field)
            raise InputError(err.problem, expected=err.expected, location=loc) from None
        raise
    except (yaml.YAMLError, ValueError, RecursionError):
        parse_yaml("\n" * (first_line - 1) + text, source)  # raises the located error
        raise InputError("YAML error", expected="valid YAML", location=Location(source)) from None
