"""``-o yaml|json`` prints objects kubectl accepts; several objects as a v1 List."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from gpuplane.cli.main import run
from gpuplane.k8s.output import as_list, render

REPO = Path(__file__).resolve().parents[3]
DRA_OBJECTS = REPO / "tests/golden/dra-objects.yaml"
K8S_VERSION = "1.34.0"  # resource.k8s.io/v1 is served from Kubernetes 1.34


def validate(obj: dict[str, Any]) -> None:
    """kubectl's client-side schema check for each built-in object (a List item by item)."""
    if obj["kind"] == "List":
        assert obj["apiVersion"] == "v1" and isinstance(obj["items"], list)
        for item in obj["items"]:
            validate(item)
        return
    kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


def output_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert run(argv) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_dra_allocate_prints_the_claims_with_their_allocation(
    fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text = output_of(["dra", "allocate", str(DRA_OBJECTS), "--node", "node-a", "-o", fmt], capsys)
    doc = json.loads(text) if fmt == "json" else yaml.safe_load(text)
    validate(doc)
    claims = doc["items"] if doc["kind"] == "List" else [doc]
    assert claims and all(c["kind"] == "ResourceClaim" for c in claims)
    for claim in claims:
        results = claim["status"]["allocation"]["devices"]["results"]
        assert results and all(r["pool"] == "node-a" for r in results)
    # the same allocation as --json reports
    answer = json.loads(
        output_of(["dra", "allocate", str(DRA_OBJECTS), "--node", "node-a", "--json"], capsys)
    )
    assert [c["status"]["allocation"] for c in claims] == [
        c["allocation"] for c in answer["claims"]
    ]


def test_dra_allocate_without_an_allocation_prints_no_object(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = yaml.safe_load_all(DRA_OBJECTS.read_text())
    claims = [d for d in doc if d and d.get("kind") == "ResourceClaim"]
    # A claim for more GPUs than any node has is unsatisfiable: stdout stays empty.
    claims[0]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 20
    others = [
        d for d in yaml.safe_load_all(DRA_OBJECTS.read_text()) if d and d["kind"] != "ResourceClaim"
    ]
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all([*others, claims[0]]))
    assert run(["dra", "allocate", str(path), "--node", "node-a", "-o", "yaml"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "unsatisfiable" in captured.err


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_topo_nrt_output(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = output_of(["topo", "nrt", "hgx-h200", "--node-name", "n1", "-o", fmt], capsys)
    doc = json.loads(text) if fmt == "json" else yaml.safe_load(text)
    default = yaml.safe_load(output_of(["topo", "nrt", "hgx-h200", "--node-name", "n1"], capsys))
    assert doc == default
    assert doc["kind"] == "NodeResourceTopology" and doc["metadata"] == {"name": "n1"}


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_topo_labels_as_a_node_patch(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = output_of(["topo", "labels", "hgx-h200", "--node-name", "gpu-1", "-o", fmt], capsys)
    doc = json.loads(text) if fmt == "json" else yaml.safe_load(text)
    validate(doc)
    assert doc["kind"] == "Node" and doc["metadata"]["name"] == "gpu-1"
    assert doc["metadata"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-H200"


def test_an_unknown_format_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["topo", "nrt", "hgx-h200", "-o", "xml"]) == 2
    assert "xml" in capsys.readouterr().err


def test_list_forms() -> None:
    a = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}
    b = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}
    assert as_list([a]) is a
    many = as_list([a, b])
    assert many == {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
        "items": [a, b],
    }
    validate(many)
    assert as_list([])["items"] == []
    assert json.loads(render([a, b], "json")) == many
    assert yaml.safe_load(render([a, b], "yaml")) == many


def test_mig_defaults_as_the_operator_config_map(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = yaml.safe_load(
        output_of(["mig", "defaults", "--gpu", "A100-SXM4-40GB", "-o", "yaml"], capsys)
    )
    validate(doc)
    assert doc["kind"] == "ConfigMap"
    assert doc["metadata"]["name"] == "default-mig-parted-config"
    assert doc["metadata"]["namespace"] == "gpu-operator"
    plain = output_of(["mig", "defaults", "--gpu", "A100-SXM4-40GB"], capsys)
    assert doc["data"]["config.yaml"] == plain
    path = tmp_path / "config.yaml"
    path.write_text(doc["data"]["config.yaml"])
    assert run(["mig", "check-config", str(path), "--json"]) == 0


def test_mig_plan_as_a_config_map_and_its_label(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["mig", "plan", "--gpu", "A100-SXM4-40GB", "--count", "2"]
    assert run([*argv, "--demand", "1g.5gb=3,3g.20gb=2", "-o", "json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    validate(doc)
    name = captured.err.split("nvidia.com/mig.config=", 1)[1].split()[0]
    config = yaml.safe_load(doc["data"]["config.yaml"])
    assert name in config["mig-configs"] and "all-balanced" in config["mig-configs"]
    entries = config["mig-configs"][name]
    counts = [e["mig-devices"] for e in entries]
    total = {p: sum(c.get(p, 0) for c in counts) for p in ("1g.5gb", "3g.20gb")}
    assert total["1g.5gb"] >= 3 and total["3g.20gb"] >= 2
    path = tmp_path / "config.yaml"
    path.write_text(doc["data"]["config.yaml"])
    assert run(["mig", "check-config", str(path), "--gpu", "A100-SXM4-40GB"]) == 0


def test_deploy_render_prints_every_object_as_a_list(capsys: pytest.CaptureFixture[str]) -> None:
    doc = yaml.safe_load(output_of(["deploy", "render", "extender", "-o", "yaml"], capsys))
    assert doc["kind"] == "List" and doc["items"][0]["kind"] == "Namespace"
    validate(doc)
    kinds = {item["kind"] for item in doc["items"]}
    assert {"Deployment", "ServiceAccount"} <= kinds


def test_deploy_render_needs_out_or_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["deploy", "render", "extender"]) == 2
    assert "--out DIR" in capsys.readouterr().err
