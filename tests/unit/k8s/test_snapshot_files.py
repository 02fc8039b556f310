"""Snapshots from dump files: kubectl's ``v1 List``, multi-document YAML, folders and
kube-scheduler-simulator's export; located errors for bad documents; the snapshot file itself."""

from __future__ import annotations

import json
import tempfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.core.errors import InputError
from gpuplane.k8s.cluster.file_reader import read_files
from gpuplane.k8s.cluster.snapshot_file import parse_snapshot, read_snapshot, write_snapshot

NOW = "2026-12-01T00:00:00Z"

LIST = """\
apiVersion: v1
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-a
- apiVersion: v1
  kind: Pod
  metadata:
    name: p
    namespace: ml
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web
    namespace: ml
kind: List
metadata:
  resourceVersion: ""
"""

MULTI = """\
apiVersion: resource.k8s.io/v1beta1
kind: DeviceClass
metadata:
  name: gpu.nvidia.com
---
# a comment-only document is skipped
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high
value: 1000
"""


def _write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


def _names(objs: tuple[dict[str, object], ...]) -> list[object]:
    return [o["metadata"]["name"] for o in objs]  # type: ignore[index]


def test_v1_list_keeps_the_catalogue_kinds_and_notes_the_others(tmp_path: Path) -> None:
    snap = read_files([_write(tmp_path / "dump.yaml", LIST)], read_at=NOW)
    assert _names(snap.of("nodes")) == ["gpu-a"]
    assert _names(snap.of("pods")) == ["p"]
    assert [(s.resource, s.reason) for s in snap.skipped] == [
        ("Deployment (apps/v1)", "1 object(s) of a kind gpuplane does not read")
    ]
    assert snap.api_versions == {"nodes": "v1", "pods": "v1"}
    assert snap.read_at == NOW and snap.server_version is None


def test_multi_document_yaml_and_folders(tmp_path: Path) -> None:
    folder = tmp_path / "dumps"
    (folder / "sub").mkdir(parents=True)
    _write(folder / "a.yaml", LIST)
    _write(folder / "sub" / "b.yml", MULTI)
    _write(folder / "notes.txt", "not a dump")
    snap = read_files([folder], read_at=NOW)
    assert _names(snap.of("deviceClasses")) == ["gpu.nvidia.com"]
    assert snap.api_versions["deviceClasses"] == "resource.k8s.io/v1beta1"
    assert _names(snap.of("priorityClasses")) == ["high"]
    assert _names(snap.of("nodes")) == ["gpu-a"]


def test_json_list_as_kubectl_prints_it(tmp_path: Path) -> None:
    data = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
        ],
    }
    snap = read_files([_write(tmp_path / "nodes.json", json.dumps(data, indent=4))], read_at=NOW)
    assert _names(snap.of("nodes")) == ["n1"]


def test_simulator_export(tmp_path: Path) -> None:
    export = {
        "pods": [{"metadata": {"name": "p", "namespace": "default"}, "spec": {}}],
        "nodes": [{"metadata": {"name": "n"}, "status": {}}],
        "pvs": [{"metadata": {"name": "pv"}}],
        "pvcs": [],
        "storageClasses": [],
        "priorityClasses": [{"metadata": {"name": "high"}, "value": 10}],
        "schedulerConfig": {"profiles": []},
        "namespaces": [{"metadata": {"name": "default"}}],
    }
    path = _write(tmp_path / "export.json", json.dumps(export))
    snap = read_files([path], read_at=NOW)
    assert snap.of("pods")[0]["kind"] == "Pod" and snap.of("pods")[0]["apiVersion"] == "v1"
    assert snap.of("priorityClasses")[0]["apiVersion"] == "scheduling.k8s.io/v1"
    assert _names(snap.of("nodes")) == ["n"]
    assert {s.resource for s in snap.skipped} == {"pvs", "namespaces", "schedulerConfig"}


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (LIST.replace("  kind: Pod\n", ""), "dump.yaml:7: items[1].kind: document 1"),
        (LIST.replace("    name: p\n", ""), "dump.yaml:9: items[1].metadata.name: document 1"),
        (MULTI.replace("name: high", "nam: high"), "dump.yaml:10: metadata.name: document 2"),
        ("apiVersion: v1\nkind: List\nitems: 3\n", "dump.yaml:3: items: document 1"),
        ("- a\n- b\n", "dump.yaml:1: document 1: found list"),
    ],
)
def test_bad_documents_are_located(tmp_path: Path, text: str, where: str) -> None:
    with pytest.raises(InputError) as exc:
        read_files([_write(tmp_path / "dump.yaml", text)], read_at=NOW)
    assert str(exc.value).startswith(f"{tmp_path}/{where}"), str(exc.value)


def test_an_object_twice_is_an_error_naming_both_places(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.yaml", LIST)
    b = _write(tmp_path / "b.yaml", LIST)
    with pytest.raises(InputError) as exc:
        read_files([a, b], read_at=NOW)
    assert str(exc.value).startswith(f"{b}:3: items[0]: Node gpu-a appears twice (first at {a}:3)")


def test_missing_paths_and_empty_folders(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file or folder"):
        read_files([tmp_path / "nope.yaml"], read_at=NOW)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"no \.yaml, \.yml or \.json files"):
        read_files([tmp_path / "empty"], read_at=NOW)


@pytest.mark.parametrize("name", ["snap.yaml", "snap.json"])
def test_snapshot_file_round_trip(tmp_path: Path, name: str) -> None:
    snap = read_files([_write(tmp_path / "dump.yaml", LIST)], read_at=NOW)
    write_snapshot(snap, tmp_path / name)
    assert read_snapshot(tmp_path / name) == snap


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("apiVersion: v1\nkind: List\n", "s.yaml:2: kind: not a snapshot (v1/List)"),
        (
            "apiVersion: gpuplane.io/v1alpha1\nkind: ClusterSnapshot\nobjects:\n  widgets: []\n",
            "s.yaml:4: objects.widgets: unknown object key 'widgets'",
        ),
        (
            "apiVersion: gpuplane.io/v1alpha1\nkind: ClusterSnapshot\nobjects:\n  nodes:\n  - 3\n",
            "s.yaml:5: objects.nodes[0]: found int",
        ),
    ],
)
def test_bad_snapshot_files_are_located(text: str, where: str) -> None:
    with pytest.raises(InputError) as exc:
        parse_snapshot(text, "s.yaml")
    assert str(exc.value).startswith(where), str(exc.value)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
_ITEM = st.fixed_dictionaries(
    {},
    optional={
        "apiVersion": st.sampled_from(["v1", "resource.k8s.io/v1", "", "x/y"]) | _JSON,
        "kind": st.sampled_from(["Node", "Pod", "DeviceClass", "List", ""]) | _JSON,
        "metadata": st.fixed_dictionaries({}, optional={"name": st.text(max_size=4) | _JSON})
        | _JSON,
    },
)


@settings(max_examples=60, deadline=None)
@given(items=st.lists(_ITEM | _JSON, max_size=4))
def test_any_dump_reads_or_fails_with_a_located_error(items: list[object]) -> None:
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "dump.json"
        path.write_text(text)
        try:
            snap = read_files([path], read_at=NOW)
        except InputError as exc:
            assert exc.location.source == str(path)
        else:
            assert sum(len(v) for v in snap.objects.values()) <= len(items)
