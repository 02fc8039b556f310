"""Read a snapshot's objects from dumps: ``kubectl get ... -A -o yaml|json`` output (a ``v1 List``
or multi-document YAML), several files or folders of them, and kube-scheduler-simulator's export.

The simulator's export (``simulator/snapshot/snapshot.go``) is one JSON object keyed ``pods``,
``nodes``, ``pvs``, ``pvcs``, ``storageClasses``, ``priorityClasses``, ``schedulerConfig``,
``namespaces``; its objects are Go structs serialised without ``kind``/``apiVersion``, which are
filled in from the key. Every malformed object is an InputError at its file, line and field.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import is_dir, is_file, read_user_text
from gpuplane.k8s.cluster.api_lister import RawObject
from gpuplane.k8s.cluster.catalogue import SNAPSHOT_KEYS, resource_for_kind
from gpuplane.k8s.cluster.snapshot import ClusterSnapshot, Skipped
from gpuplane.k8s.yaml_documents import YamlDocument, read_documents_fast

DUMP_SUFFIXES = (".yaml", ".yml", ".json")

# Simulator export key -> (apiVersion, kind) of its objects; keys gpuplane reads.
SIMULATOR_KINDS = {
    "pods": ("v1", "Pod"),
    "nodes": ("v1", "Node"),
    "priorityClasses": ("scheduling.k8s.io/v1", "PriorityClass"),
}
SIMULATOR_UNUSED = ("pvs", "pvcs", "storageClasses", "namespaces", "schedulerConfig")


@dataclass(frozen=True, slots=True)
class _Found:
    """One object read from a file, with where it was, for located errors and duplicates."""

    obj: RawObject
    source: str
    doc: YamlDocument
    field: str

    @property
    def line(self) -> int | None:
        return self.doc.line_of(self.field)


def dump_files(paths: Sequence[Path]) -> list[Path]:
    """The files to read: each file as given, each folder's dump files (recursively, sorted)."""
    files: list[Path] = []
    for path in paths:
        if is_dir(path):
            found = sorted(p for p in path.rglob("*") if p.suffix in DUMP_SUFFIXES and p.is_file())
            if not found:
                raise InputError(
                    "the folder has no .yaml, .yml or .json files",
                    location=Location(source=str(path)),
                )
            files.extend(found)
        elif is_file(path):
            files.append(path)
        else:
            raise InputError("no such file or folder", location=Location(source=str(path)))
    return files


def _error(doc: YamlDocument, number: int, field: str, problem: str, expected: str) -> InputError:
    loc = Location(source=doc.index.source, line=doc.line_of(field), field=field or None)
    return InputError(f"document {number}: {problem}", expected=expected, location=loc)


def _checked(doc: YamlDocument, number: int, field: str, value: Any) -> RawObject:
    """``value`` if it looks like a Kubernetes object (apiVersion, kind, metadata.name)."""
    prefix = f"{field}." if field else ""
    if not isinstance(value, dict):
        raise _error(doc, number, field, f"found {type(value).__name__}", "a Kubernetes object")
    for key in ("apiVersion", "kind"):
        if not isinstance(value.get(key), str) or not value[key]:
            raise _error(doc, number, prefix + key, f"missing or empty {key}", f"a {key} string")
    meta = value.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise _error(doc, number, prefix + "metadata.name", "object has no metadata.name", "a name")
    return value


def _simulator_objects(doc: YamlDocument, number: int) -> Iterator[tuple[str, RawObject]]:
    data: dict[str, Any] = doc.data
    for key, (api_version, kind) in SIMULATOR_KINDS.items():
        items = data.get(key) or []
        if not isinstance(items, list):
            raise _error(doc, number, key, f"{key} is {type(items).__name__}", "a list")
        for i, item in enumerate(items):
            if isinstance(item, dict):
                item = {"apiVersion": api_version, "kind": kind, **item}
            yield f"{key}[{i}]", _checked(doc, number, f"{key}[{i}]", item)


def _is_simulator_export(data: Any) -> bool:
    return isinstance(data, dict) and "kind" not in data and any(k in data for k in SIMULATOR_KINDS)


def _document_objects(doc: YamlDocument, number: int) -> Iterator[tuple[str, RawObject]]:
    data = doc.data
    if _is_simulator_export(data):
        yield from _simulator_objects(doc, number)
        return
    if isinstance(data, dict) and str(data.get("kind", "")).endswith("List") and "items" in data:
        items = data["items"] or []
        if not isinstance(items, list):
            raise _error(doc, number, "items", f"items is {type(items).__name__}", "a list")
        for i, item in enumerate(items):
            yield f"items[{i}]", _checked(doc, number, f"items[{i}]", item)
        return
    yield "", _checked(doc, number, "", data)


def _unused_simulator_parts(doc: YamlDocument) -> list[Skipped]:
    """Notes for the simulator export's non-empty parts that gpuplane does not read."""
    if not _is_simulator_export(doc.data):
        return []
    return [
        Skipped(key, f"{doc.index.source}: kube-scheduler-simulator's {key} are not read")
        for key in SIMULATOR_UNUSED
        if doc.data.get(key)
    ]


def _read_file(path: Path) -> tuple[list[_Found], list[Skipped]]:
    try:
        text = read_user_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the file: {exc}", location=Location(str(path))) from exc
    found: list[_Found] = []
    notes: list[Skipped] = []
    documents = 0
    for number, doc in enumerate(read_documents_fast(text, str(path)), start=1):
        documents += 1
        notes.extend(_unused_simulator_parts(doc))
        for field, obj in _document_objects(doc, number):
            found.append(_Found(obj, str(path), doc, field))
    if documents == 0:
        # kubectl writes `kind: List` with `items: []` for nothing; an empty file is no dump.
        raise InputError(
            "the file holds no YAML or JSON document",
            expected="kubectl get -o yaml/json output or a kube-scheduler-simulator export",
            location=Location(str(path), 1),
        )
    return found, notes


def _identity(obj: RawObject) -> tuple[str, str, str]:
    meta = obj["metadata"]
    return obj["kind"], str(meta.get("namespace") or ""), meta["name"]


def read_files(paths: Sequence[Path], *, read_at: str) -> ClusterSnapshot:
    """A snapshot of every catalogue object in the dumps; other kinds are noted as skipped."""
    files = dump_files(paths)
    objects: dict[str, list[RawObject]] = {}
    versions: dict[str, set[str]] = {}
    seen: dict[tuple[str, str, str], _Found] = {}
    ignored: Counter[str] = Counter()
    skipped: list[Skipped] = []
    for path in files:
        found_in_file, notes = _read_file(path)
        skipped.extend(notes)
        for found in found_in_file:
            obj = found.obj
            res = resource_for_kind(obj["apiVersion"], obj["kind"])
            if res is None:
                ignored[f"{obj['kind']} ({obj['apiVersion']})"] += 1
                continue
            ident = _identity(obj)
            if ident in seen:
                first = seen[ident]
                where = first.source + (f":{first.line}" if first.line else "")
                raise InputError(
                    f"{ident[0]} {'/'.join(p for p in ident[1:] if p)} appears twice "
                    f"(first at {where})",
                    expected="each object once",
                    location=Location(found.source, found.line, found.field or None),
                )
            seen[ident] = found
            objects.setdefault(res.key, []).append(obj)
            versions.setdefault(res.key, set()).add(obj["apiVersion"])
    skipped += [
        Skipped(kind, f"{n} object(s) of a kind gpuplane does not read")
        for kind, n in sorted(ignored.items())
    ]
    return ClusterSnapshot(
        source="files " + ", ".join(str(p) for p in paths),
        read_at=read_at,
        server_version=None,
        api_versions={k: ", ".join(sorted(v)) for k, v in versions.items()},
        skipped=tuple(skipped),
        objects={k: tuple(objects.get(k, ())) for k in SNAPSHOT_KEYS},
    )
