"""Container images for ImageLocality: nodes' ``status.images`` (every name, its sizeBytes) and
pods' container images, read by ``fit`` from a snapshot and from a workload file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpuplane.core.errors import InputError
from gpuplane.fit.expand import expand
from gpuplane.fit.framework_view import framework_view
from gpuplane.fit.model import FitCluster
from gpuplane.k8s.cluster.fit_cluster import fit_node
from gpuplane.k8s.cluster.fit_pools import NodeDefaults
from gpuplane.k8s.cluster.raw_pod import fit_pod
from gpuplane.k8s.fit.workload import read_workload

MIB = 1024 * 1024


def _node(name: str, images: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}, "images": images},
    }


def test_every_name_of_an_entry_gets_its_size() -> None:
    node = fit_node(
        _node(
            "n0",
            [
                {"names": ["app@sha256:" + "ab" * 32, "app:1.0"], "sizeBytes": 500 * MIB},
                {"names": ["pause:3.10"], "sizeBytes": 320_368},
                {"names": ["app:1.0"], "sizeBytes": 1},  # a repeated name keeps its first size
                {"sizeBytes": 7},  # no names: nothing to look up
            ],
        ),
        0,
        "snap.json",
        NodeDefaults(),
    )
    assert dict(node.images) == {
        "app@sha256:" + "ab" * 32: 500 * MIB,
        "app:1.0": 500 * MIB,
        "pause:3.10": 320_368,
    }
    assert fit_node(_node("n1", None), 1, "snap.json", NodeDefaults()).images == {}


def test_a_bad_size_is_located() -> None:
    with pytest.raises(InputError) as err:
        fit_node(_node("n0", [{"names": ["a:1"], "sizeBytes": "big"}]), 3, "s.json", NodeDefaults())
    assert err.value.location.field == "status.images[0].sizeBytes"
    assert "objects.nodes[3] (n0)" in str(err.value.location)


def test_bound_and_pending_pods_carry_their_containers_images() -> None:
    pod = {
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {
            "initContainers": [
                {"name": "fetch", "image": "busybox"},
                {"name": "proxy", "image": "envoy:1.30", "restartPolicy": "Always"},
            ],
            "containers": [{"name": "main", "image": "app:1.0"}],
        },
    }
    info = fit_pod(pod, 0, "s.json", {}, 0).info
    assert [(c.name, c.image, c.init) for c in info.containers] == [
        ("main", "app:1.0", False),
        ("fetch", "busybox", True),
        ("proxy", "envoy:1.30", False),  # a sidecar runs beside the app containers
    ]


def test_workload_pods_carry_their_images(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ns}\nspec:\n"
        "  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n"
        "    metadata: {labels: {app: web}}\n    spec:\n"
        "      initContainers: [{name: init, image: 'reg:5000/tools'}]\n"
        "      containers: [{name: web, image: nginx:1.27}, {name: noimage}]\n"
    )
    workload = read_workload(path)
    fw = expand([d.parsed for d in workload.documents], FitCluster(nodes=(), pods=()))
    assert len(fw.pods) == 2
    assert [(c.image, c.init) for c in fw.pods[0].info.containers] == [
        ("reg:5000/tools", True),
        ("nginx:1.27", False),
        ("", False),
    ]


def test_a_non_string_image_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        "  containers: [{name: c, image: 5}]\n"
    )
    with pytest.raises(InputError) as err:
        read_workload(path)
    assert "image" in str(err.value)


def test_the_snapshot_counts_nodes_per_image() -> None:
    nodes = tuple(
        fit_node(_node(f"n{i}", images), i, "s.json", NodeDefaults())
        for i, images in enumerate(
            [
                [{"names": ["a:1"], "sizeBytes": 100}],
                [],
                [{"names": ["a:1", "b:1"], "sizeBytes": 100}],
            ]
        )
    )
    snap = framework_view(FitCluster(nodes=nodes, pods=())).snapshot
    assert snap.image_states is not None
    a = snap.image_states.get("a:1")
    assert a is not None and a.num_nodes == 2 and a.nodes.tolist() == [0, 2]
    assert snap.node_images[1] == {}
