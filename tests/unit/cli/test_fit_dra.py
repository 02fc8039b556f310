"""``fit`` with DRA: a workload's ResourceClaimTemplate becomes a claim per pod (as the
resourceclaim controller makes it), the DynamicResources plugin allocates it, and the answer
names the devices; a template that exists nowhere is the error the pod would wait with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.cli.main import run

CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.nvidia.com", "uid": "c1", "resourceVersion": "1"},
    "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]},
}


def _slice(node: str, domains: list[str]) -> dict[str, Any]:
    devices = [
        {"name": f"gpu-{i}", "attributes": {"index": {"int": i}, "domain": {"string": d}}}
        for i, d in enumerate(domains)
    ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-gpus", "uid": f"s-{node}", "resourceVersion": "2"},
        "spec": {
            "driver": "gpu.nvidia.com",
            "nodeName": node,
            "devices": devices,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
        },
    }


def _node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {}},
        "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}},
    }


WORKLOAD = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu-pair, namespace: default}
spec:
  spec:
    devices:
      requests:
      - {name: gpus, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}
      constraints:
      - {matchAttribute: gpu.nvidia.com/domain}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: default}
spec:
  resourceClaims: [{name: gpus, resourceClaimTemplateName: %s}]
  containers:
  - name: c
    resources: {claims: [{name: gpus}]}
"""


@pytest.fixture()
def snapshot(tmp_path: Path) -> Path:
    dump = tmp_path / "dump.yaml"
    objs = [CLASS, _node("a"), _node("b"), _slice("a", ["x", "y", "y"]), _slice("b", ["x", "z"])]
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objs}))
    out = tmp_path / "snap.yaml"
    assert run(["snapshot", "save", "--from", str(dump), "--out", str(out)]) == 0
    return out


def test_claims_from_templates_get_devices(
    snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    w = tmp_path / "w.yaml"
    w.write_text(WORKLOAD % "gpu-pair")
    capsys.readouterr()
    assert run(["fit", str(w), "--snapshot", str(snapshot), "--json"]) == 0
    (pod,) = json.loads(capsys.readouterr().out)["pods"]
    assert pod["outcome"] == "fits" and pod["node"] == "a"  # only node a has a same-domain pair
    assert sorted(pod["draDevices"]) == ["gpu.nvidia.com/a/gpu-1", "gpu.nvidia.com/a/gpu-2"]


def test_a_missing_template_is_refused(
    snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    w = tmp_path / "w.yaml"
    w.write_text(WORKLOAD % "nope")
    assert run(["fit", str(w), "--snapshot", str(snapshot)]) == 2
    assert 'resourceclaimtemplate.resource.k8s.io "nope" not found' in capsys.readouterr().err
