"""Field paths into parsed YAML/JSON data: ``serving.services[0].traffic.rate_scale``.

A ``[N]`` part indexes a list; a ``[NAME]`` part picks the list's element whose ``name`` is NAME
(``serving[qwen-chat].slo_attainment``), so a path survives reordering, or, in a mapping, the key
NAME as written, dots and all (``resources.limits[nvidia.com/gpu]``). Pure: no I/O.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from gpuplane.core.errors import InputError, Location

_PART = re.compile(r"([^.\[\]]+)|\[([^\[\]]+)\]")


def split_path(path: str, field: str) -> list[str | int]:
    """``a.b[0][x]`` -> ``["a", "b", 0, "[x]"]`` (a named element keeps its brackets)."""
    parts: list[str | int] = []
    pos = 0
    while pos < len(path):
        if path[pos] == "." and parts and pos + 1 < len(path):
            pos += 1
        m = _PART.match(path, pos)
        if m is None:
            raise InputError(
                f"{path!r} is not a field path",
                expected="keys joined by dots, list items as [N] or [NAME], e.g. "
                "serving.services[0].traffic.rate_scale",
                location=Location(field=field),
            )
        key, item = m.group(1), m.group(2)
        if key is not None:
            parts.append(key)
        else:
            parts.append(int(item) if item.isdigit() else f"[{item}]")
        pos = m.end()
    if not parts:
        raise InputError(
            "empty field path", expected="a field path", location=Location(field=field)
        )
    return parts


def _step(node: Any, part: str | int) -> tuple[bool, Any]:
    """(found, child)."""
    if isinstance(part, int):
        if isinstance(node, list) and 0 <= part < len(node):
            return True, node[part]
        return False, None
    if part.startswith("["):
        name = part[1:-1]
        if isinstance(node, dict):  # a key with dots in it: limits[nvidia.com/gpu]
            return (True, node[name]) if name in node else (False, None)
        if isinstance(node, list):
            for item in node:
                if isinstance(item, dict) and item.get("name") == name:
                    return True, item
        return False, None
    if isinstance(node, dict) and part in node:
        return True, node[part]
    return False, None


def _describe(node: Any) -> str:
    if isinstance(node, dict):
        return "one of the keys " + ", ".join(map(str, node)) if node else "no key (empty mapping)"
    if isinstance(node, list):
        names = [i.get("name") for i in node if isinstance(i, dict) and "name" in i]
        text = f"an index 0-{len(node) - 1}" if node else "nothing (empty list)"
        return text + (" or [NAME] of " + ", ".join(map(str, names)) if names else "")
    return f"nothing below a {type(node).__name__}"


def _join(done: str, part: str | int) -> str:
    if isinstance(part, int):
        return f"{done}[{part}]"
    if part.startswith("["):
        return done + part
    return f"{done}.{part}" if done else part


def _walk(data: Any, parts: list[str | int], path: str, field: str) -> Any:
    node, done = data, ""
    for part in parts:
        found, child = _step(node, part)
        if not found:
            where = f"under {done!r}" if done else "at the top"
            raise InputError(
                f"{path!r}: no {part!r} {where}",
                expected=_describe(node),
                location=Location(field=field),
            )
        node, done = child, _join(done, part)
    return node


def get_path(data: Any, path: str, field: str) -> Any:
    """The value at ``path``; InputError (``field``) naming what is there instead."""
    return _walk(data, split_path(path, field), path, field)


def set_path(data: Any, path: str, value: Any, field: str) -> Any:
    """A deep copy of ``data`` with ``path`` set to ``value``. Every part but the last must
    exist; the last may be a new key of a mapping (a field the file leaves at its default)."""
    parts = split_path(path, field)
    out = copy.deepcopy(data)
    parent = _walk(out, parts[:-1], path, field)
    last = parts[-1]
    if isinstance(parent, dict) and isinstance(last, str) and last[:1] == "[":
        last = last[1:-1]  # limits[nvidia.com/gpu]: the key as written between brackets
    key_of_mapping = isinstance(parent, dict) and isinstance(last, str)
    item_of_list = isinstance(parent, list) and isinstance(last, int) and 0 <= last < len(parent)
    if key_of_mapping or item_of_list:
        parent[last] = value
    else:
        raise InputError(
            f"{path!r}: cannot set {last!r}",
            expected=_describe(parent),
            location=Location(field=field),
        )
    return out
