"""Write and read the ``ClusterSnapshot`` file (YAML, or JSON when the name ends in ``.json``).

Reading checks the envelope (apiVersion, kind, metadata, the object keys) and that each object
is a mapping; errors are located at the file's line and field. The objects themselves are raw
API objects and are checked by whoever interprets them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import read_user_text
from gpuplane.core.yamlio import LazyLineIndex, LineIndex, load_fast
from gpuplane.k8s.cluster.api_lister import RawObject
from gpuplane.k8s.cluster.catalogue import SNAPSHOT_KEYS
from gpuplane.k8s.cluster.snapshot import API_VERSION, KIND, ClusterSnapshot, Skipped


def snapshot_text(snapshot: ClusterSnapshot, *, as_json: bool) -> str:
    data = snapshot.as_dict()
    if as_json:
        return json.dumps(data, indent=2) + "\n"
    # libyaml's emitter when installed: a large cluster's snapshot is written in seconds.
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True, width=100)


def write_snapshot(snapshot: ClusterSnapshot, path: Path) -> None:
    try:
        # Like every other --out, the folders on the way are created.
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(snapshot_text(snapshot, as_json=path.suffix == ".json"), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write the snapshot: {exc}", location=Location(str(path))) from exc


class _Reader:
    """Located checks over one parsed snapshot file."""

    def __init__(self, source: str, index: LineIndex | LazyLineIndex) -> None:
        self.source = source
        self.index = index

    def fail(self, field: str, problem: str, expected: str) -> InputError:
        loc = Location(self.source, self.index.line_of(field), field or None)
        return InputError(problem, expected=expected, location=loc)

    def mapping(self, value: Any, field: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(field, f"found {type(value).__name__}", "a mapping")
        return value

    def optional_str(self, value: Any, field: str) -> str | None:
        if value is not None and not isinstance(value, str):
            raise self.fail(field, f"found {type(value).__name__}", "a string")
        return value

    def objects(self, value: Any) -> dict[str, tuple[RawObject, ...]]:
        out: dict[str, tuple[RawObject, ...]] = {}
        for key, items in self.mapping(value or {}, "objects").items():
            field = f"objects.{key}"
            if key not in SNAPSHOT_KEYS:
                raise self.fail(field, f"unknown object key {key!r}", ", ".join(SNAPSHOT_KEYS))
            if not isinstance(items, list):
                raise self.fail(field, f"found {type(items).__name__}", "a list of objects")
            out[key] = tuple(self.mapping(o, f"{field}[{i}]") for i, o in enumerate(items))
        # Every key, in the catalogue's order, as the readers make them (a missing key is empty).
        return {key: out.get(key, ()) for key in SNAPSHOT_KEYS}

    def skipped(self, value: Any) -> tuple[Skipped, ...]:
        if not isinstance(value or [], list):
            raise self.fail("metadata.skipped", "found a non-list", "a list")
        out: list[Skipped] = []
        for i, item in enumerate(value or []):
            entry = self.mapping(item, f"metadata.skipped[{i}]")
            resource, reason = entry.get("resource"), entry.get("reason")
            if not isinstance(resource, str) or not isinstance(reason, str):
                raise self.fail(f"metadata.skipped[{i}]", "incomplete", "resource and reason")
            out.append(Skipped(resource, reason))
        return tuple(out)


def parse_snapshot(text: str, source: str) -> ClusterSnapshot:
    data = load_fast(text, source)
    if data is None:
        raise InputError("the snapshot file is empty", location=Location(source, 1))
    r = _Reader(source, LazyLineIndex(text, source))
    top = r.mapping(data, "")
    if top.get("apiVersion") != API_VERSION or top.get("kind") != KIND:
        found = f"{top.get('apiVersion')}/{top.get('kind')}"
        raise r.fail("kind", f"not a snapshot ({found})", f"apiVersion {API_VERSION}, kind {KIND}")
    meta = r.mapping(top.get("metadata") or {}, "metadata")
    versions = r.mapping(meta.get("apiVersions") or {}, "metadata.apiVersions")
    return ClusterSnapshot(
        source=r.optional_str(meta.get("source"), "metadata.source") or "",
        read_at=r.optional_str(meta.get("readAt"), "metadata.readAt") or "",
        server_version=r.optional_str(meta.get("serverVersion"), "metadata.serverVersion"),
        api_versions={str(k): str(v) for k, v in versions.items()},
        skipped=r.skipped(meta.get("skipped")),
        objects=r.objects(top.get("objects")),
        read_from=source,
    )


def read_snapshot(path: Path) -> ClusterSnapshot:
    try:
        text = read_user_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the snapshot: {exc}", location=Location(str(path))) from exc
    return parse_snapshot(text, str(path))
