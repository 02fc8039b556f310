"""Read a file of ``resource.k8s.io/v1`` objects the ways people save them: multi-document YAML
(``---``), a JSON array of objects, or a list object as ``kubectl get -o yaml|json`` writes it
(``kind: List`` with ``items``, or a typed list such as ``ResourceSliceList`` read straight from
the API server, whose items carry no ``kind``/``apiVersion`` of their own).

Each object goes through ``dra_manifests.parse_dra_object`` (defaulting, strict fields, the API
server's validation) and keeps where it was found, so a mistake, or a later check such as a
duplicate name, is reported at ``file:line: field.path``: ``items[2].spec.devices`` in a list,
``[2].spec.devices`` in a JSON array.

JSON is decoded by the JSON reader (its numbers and escapes, duplicate keys refused); line numbers
come from the same text read as YAML (a JSON document is a YAML flow document once the tabs JSON
allows between tokens are turned into spaces).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuplane.core.errors import InputError, Location
from gpuplane.core.nesting import check_json_depth
from gpuplane.core.textio import read_user_text
from gpuplane.core.yamlio import LineIndex, parse_yaml
from gpuplane.k8s.dra.manifests import KINDS, DraObjects, parse_dra_object
from gpuplane.k8s.field_errors import LineOf, fail, join_path, relocate
from gpuplane.k8s.yaml_documents import read_documents
from gpuplane.slicing.dra import limits
from gpuplane.slicing.dra.claims import DeviceClass, ResourceClaim, ResourceClaimTemplate
from gpuplane.slicing.dra.devices import ResourceSlice

DraValue = ResourceSlice | DeviceClass | ResourceClaim | ResourceClaimTemplate
LIST_KIND = "List"
# Typed lists the API server returns (``GET /apis/resource.k8s.io/v1/resourceslices``).
TYPED_LISTS = {f"{kind}List": kind for kind in KINDS}
_LIST_KEYS = ("apiVersion", "kind", "metadata", "items")


@dataclass(frozen=True, slots=True)
class LocatedDraObject:
    """One object of the file and where it is: ``prefix`` is its path in the document (``""``
    for a document that is the object itself, ``[2]`` or ``items[2]`` in a list)."""

    value: DraValue
    kind: str
    source: str
    prefix: str
    line_of: LineOf
    # The object as written (a mapping), for output that echoes it back with a status added.
    manifest: Any = None

    @property
    def location(self) -> Location:
        return self.at("")

    def at(self, field: str) -> Location:
        """Where ``field`` of this object is (the nearest enclosing line the file has)."""
        path = join_path(self.prefix, field)
        return Location(self.source, self.line_of(path), path or None)


@dataclass(frozen=True, slots=True)
class _Document:
    data: Any
    line_of: LineOf


def _no_lines(_field: str) -> int | None:
    return None


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _json_document(text: str, source: str) -> _Document:
    check_json_depth(text, source)
    try:
        data = json.loads(text, object_pairs_hook=_reject_duplicate_keys)
    except json.JSONDecodeError as err:
        raise InputError(
            f"invalid JSON: {err.msg} (column {err.colno})",
            expected="a JSON array of objects, or YAML documents",
            location=Location(source, err.lineno),
        ) from None
    except (ValueError, RecursionError) as err:
        _line_index(text, source)  # a duplicate key: the YAML reader says on which line
        raise InputError(
            f"invalid JSON: {err}", expected="each key once", location=Location(source)
        ) from None
    try:
        line_of = _line_index(text, source)
    except InputError:
        line_of = _no_lines  # JSON the YAML reader cannot follow: no line numbers, same data
    return _Document(data, line_of)


def _line_index(text: str, source: str) -> LineOf:
    """Lines of a JSON text's fields (tabs, allowed between JSON tokens, are not in YAML)."""
    node, _ = parse_yaml(text.replace("\t", " "), source)
    return LineIndex(node, source).line_of if node is not None else _no_lines


def _documents(text: str, source: str) -> list[_Document]:
    start = text.lstrip("\ufeff \t\r\n")
    if start.startswith(("[", "{")):
        try:
            return [_json_document(text, source)]
        except InputError as json_error:
            try:  # a YAML flow document ({kind: ResourceClaim, ...}) is not JSON
                return [_Document(d.data, d.line_of) for d in read_documents(text, source)]
            except InputError:
                raise json_error from None
    return [_Document(d.data, d.line_of) for d in read_documents(text, source)]


def _list_items(data: dict[str, Any], list_kind: str) -> list[tuple[Any, str]]:
    for key in data:
        if key not in _LIST_KEYS:
            raise fail(
                f'unknown field "{key}"', str(key), expected=f"one of {', '.join(_LIST_KEYS)}"
            )
    items = data.get("items")
    if items is None:
        return []
    if not isinstance(items, list):
        raise fail(f"got {items!r}", "items", expected="a list of objects")
    item_kind = TYPED_LISTS.get(list_kind)
    out = []
    for i, item in enumerate(items):
        if item_kind is not None and isinstance(item, dict):
            # The API server leaves kind and apiVersion out of a typed list's items.
            item = {"apiVersion": limits.API_VERSION, "kind": item_kind, **item}
        out.append((item, f"items[{i}]"))
    return out


def _objects_of(data: Any) -> list[tuple[Any, str]]:
    """(object, path prefix) for each object a document holds."""
    if isinstance(data, list):
        return [(item, f"[{i}]") for i, item in enumerate(data)]
    if isinstance(data, dict):
        kind = data.get("kind")
        if isinstance(kind, str) and (kind == LIST_KIND or kind in TYPED_LISTS):
            return _list_items(data, kind)
    return [(data, "")]


def load_dra_objects(text: str, source: str) -> tuple[LocatedDraObject, ...]:
    """Every object of ``text`` in file order, parsed and validated; errors at file:line: field."""
    out: list[LocatedDraObject] = []
    for doc in _documents(text.removeprefix("\ufeff"), source):
        try:
            objects = _objects_of(doc.data)
        except InputError as err:
            raise relocate(err, source, doc.line_of) from None
        for item, prefix in objects:
            try:
                value = parse_dra_object(item)
            except InputError as err:
                raise relocate(err, source, doc.line_of, prefix) from None
            assert isinstance(
                value, ResourceSlice | DeviceClass | ResourceClaim | ResourceClaimTemplate
            )
            out.append(
                LocatedDraObject(value, type(value).__name__, source, prefix, doc.line_of, item)
            )
    return tuple(out)


def read_dra_file(path: Path) -> tuple[LocatedDraObject, ...]:
    """``load_dra_objects`` of a file; an unreadable file is an InputError naming it."""
    try:
        text = read_user_text(path)
    except FileNotFoundError:
        problem = f"{path} not found"
    except IsADirectoryError:
        problem = f"{path} is a directory"
    except UnicodeDecodeError:
        problem = f"{path} is not UTF-8 text"
    except OSError as err:
        problem = f"cannot read {path}: {err.strerror}"
    else:
        return load_dra_objects(text, str(path))
    raise InputError(
        problem,
        expected="a YAML or JSON file of ResourceSlice, DeviceClass and ResourceClaim objects",
        location=Location(str(path)),
    )


def _identity(obj: LocatedDraObject) -> tuple[str, str]:
    value = obj.value
    if isinstance(value, ResourceClaim | ResourceClaimTemplate):
        return obj.kind, value.key
    return obj.kind, value.name


def collect_dra_objects(objects: tuple[LocatedDraObject, ...]) -> DraObjects:
    """The objects by kind, in file order; one name given twice is refused at the second (the
    API server would answer ``already exists``; ``kubectl apply`` would silently keep the last)."""
    seen: dict[tuple[str, str], LocatedDraObject] = {}
    for obj in objects:
        key = _identity(obj)
        first = seen.get(key)
        if first is not None:
            where = first.location.render()
            raise InputError(
                f"{obj.kind} {key[1]} is given twice (first at {where})",
                expected="each object once",
                location=obj.at("metadata.name"),
            )
        seen[key] = obj
    values = [o.value for o in objects]
    return DraObjects(
        slices=tuple(v for v in values if isinstance(v, ResourceSlice)),
        classes=tuple(v for v in values if isinstance(v, DeviceClass)),
        claims=tuple(v for v in values if isinstance(v, ResourceClaim)),
        templates=tuple(v for v in values if isinstance(v, ResourceClaimTemplate)),
    )


__all__ = [
    "LIST_KIND",
    "TYPED_LISTS",
    "DraValue",
    "LocatedDraObject",
    "collect_dra_objects",
    "load_dra_objects",
    "read_dra_file",
]
