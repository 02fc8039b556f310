"""``gpuplane serve mig-controller --once``: the real client over real HTTP to a loopback server.

The fake API server (``fake_apiserver``) serves the nodes, pods and PodDisruptionBudgets written
here and records every request, so the tests check that a dry-run sends only GETs and that
``--apply`` sends exactly the label patch, ConfigMap, Event and Eviction bodies expected.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from gpuplane.cli.main import run
from gpuplane.slicing.mig.auto_place import apply_counts
from gpuplane.slicing.mig.catalog import get_mig_gpu
from gpuplane.slicing.mig.parted_config import read_parted_config
from gpuplane.slicing.mig.parted_naming import layouts_of, named_node_config
from tests.integration.fake_apiserver import Obj, Served, Written, kubeconfig_text, running

pytestmark = pytest.mark.integration

A100 = get_mig_gpu("A100-80GB")
CM_PATH = "/api/v1/namespaces/gpu-operator/configmaps"


def _node(name: str, state: str = "success") -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "labels": {
                "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
                "nvidia.com/gpu.count": "8",
                "nvidia.com/gpu.memory": "81920",
                "nvidia.com/mig.capable": "true",
                "nvidia.com/mig.strategy": "mixed",
                "nvidia.com/mig.config": "all-1g.10gb",
                "nvidia.com/mig.config.state": state,
            },
        },
        "status": {"allocatable": {"cpu": "96", "memory": "512Gi", "nvidia.com/mig-1g.10gb": "56"}},
    }


def _pod(name: str, resource: str, node: str | None = None, app: str = "train") -> Obj:
    spec: Obj = {
        "containers": [{"name": "c", "resources": {"limits": {resource: "1"}}}],
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}", "labels": {"app": app}},
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }


def _pdb(allowed: int) -> Obj:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "serve", "namespace": "ml"},
        "spec": {"selector": {"matchLabels": {"app": "serve"}}, "maxUnavailable": 1},
        "status": {"disruptionsAllowed": allowed},
    }


def _served(nodes: list[Obj], pods: list[Obj], pdbs: list[Obj] | None = None) -> Served:
    return Served(
        lists={
            "/api/v1/nodes": nodes,
            "/api/v1/pods": pods,
            "/apis/policy/v1/poddisruptionbudgets": pdbs or [],
            CM_PATH: [],
        },
        groups={},
        accept_writes=True,
    )


def _pending_3g() -> list[Obj]:
    return [_pod(f"train-{i}", "nvidia.com/mig-3g.40gb") for i in range(2)]


def _run(served: Served, tmp_path: Path, *args: str) -> None:
    with running(served) as url:
        kc = tmp_path / "kubeconfig"
        kc.write_text(kubeconfig_text({"fake": url}, "fake"))
        code = run(["serve", "mig-controller", "--kubeconfig", str(kc), "--once", *args])
    assert code == 0


def _lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def _target_name() -> str:
    """GPU 0 of 8 changed to 2x 3g.40gb, the others left at 7x 1g.10gb."""
    big, small = (apply_counts(A100, c).layout for c in ({"3g.40gb": 2}, {"1g.10gb": 7}))
    assert big is not None and small is not None
    return named_node_config(A100, [big] + [small] * 7)[0]


def test_dry_run_plans_writes_nothing_and_skips_a_pending_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    served = _served([_node("mig-a"), _node("mig-b", state="pending")], _pending_3g())
    _run(served, tmp_path, "--max-unavailable", "2")
    lines = _lines(capsys.readouterr().out)
    relabel = [r for r in lines if r["action"] == "relabel"]
    assert [(r["node"], r["from"], r["to"], r["evicts"]) for r in relabel] == [
        ("mig-a", "all-1g.10gb", _target_name(), [])
    ]
    assert relabel[0]["gpus"][0]["mig-devices"] == {"3g.40gb": 2}
    skips = [(r["node"], r["reason"]) for r in lines if r["action"] == "skip"]
    assert skips == [("mig-b", "in-progress")]
    assert lines[-1]["action"] == "round" and lines[-1]["demand"] == {"3g.40gb": 2}
    assert {m for m, *_ in served.requests} == {"GET"}
    assert served.writes == []


def test_max_unavailable_counts_the_pending_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    served = _served([_node("mig-a"), _node("mig-b", state="rebooting")], _pending_3g())
    _run(served, tmp_path, "--apply", "--max-unavailable", "1")
    lines = _lines(capsys.readouterr().out)
    skips = [(r["node"], r["reason"]) for r in lines if r["action"] == "skip"]
    assert skips == [("mig-b", "in-progress"), ("mig-a", "max-unavailable")]
    assert served.writes == []


def test_apply_sends_configmap_label_patch_and_event(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    served = _served([_node("mig-a")], _pending_3g())
    _run(served, tmp_path, "--apply")
    name = _target_name()
    assert [(w.method, w.path) for w in served.writes] == [
        ("POST", CM_PATH),
        ("PATCH", "/api/v1/nodes/mig-a"),
        ("POST", "/api/v1/namespaces/default/events"),
    ]
    cm, patch, event = served.writes
    assert cm.body["metadata"] == {
        "name": "custom-mig-parted-config",
        "namespace": "gpu-operator",
        "labels": {"app.kubernetes.io/managed-by": "gpuplane"},
    }
    assert (cm.body["apiVersion"], cm.body["kind"], list(cm.body["data"])) == (
        "v1",
        "ConfigMap",
        ["config.yaml"],
    )
    parted = read_parted_config(cm.body["data"]["config.yaml"], "cm")
    assert "all-1g.10gb" in parted.names() and parted.names()[-1] == name
    back = layouts_of(parted, name, A100, 8)
    assert back is not None and back[0].counts() == {"3g.40gb": 2}
    assert all(layout.counts() == {"1g.10gb": 7} for layout in back[1:])
    assert patch == Written(
        "PATCH",
        "/api/v1/nodes/mig-a",
        "application/merge-patch+json",
        {"metadata": {"labels": {"nvidia.com/mig.config": name}}},
    )
    body = dict(event.body)
    stamp = body.pop("firstTimestamp")
    assert body.pop("lastTimestamp") == stamp
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", stamp)
    assert body == {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": "mig-a.gpuplane-", "namespace": "default"},
        "involvedObject": {"apiVersion": "v1", "kind": "Node", "name": "mig-a", "uid": "uid-mig-a"},
        "reason": "GpuplaneMigRepartition",
        "message": f"mig.config all-1g.10gb -> {name} for pending MIG pods: GPU 0: "
        "1g.10gb@0 + 1g.10gb@1 + 1g.10gb@2 + 1g.10gb@3 + 1g.10gb@4 + 1g.10gb@5 + 1g.10gb@6 "
        "-> 3g.40gb@0 + 3g.40gb@4",
        "type": "Normal",
        "source": {"component": "gpuplane-mig-controller"},
        "reportingComponent": "gpuplane-mig-controller",
        "reportingInstance": "gpuplane-mig-controller",
        "count": 1,
    }
    assert event.content_type == "application/json"
    applied = [r for r in _lines(capsys.readouterr().out) if r["action"] == "applied"]
    assert applied == [
        {"round": 1, "mode": "apply", "action": "applied", "node": "mig-a", "config": name}
    ]


def test_pdb_blocks_the_eviction_a_change_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pods = [*_pending_3g(), _pod("serve-0", "nvidia.com/mig-1g.10gb", "mig-c", app="serve")]
    served = _served([_node("mig-c")], pods, [_pdb(0)])
    _run(served, tmp_path, "--apply", "--allow-evict")
    lines = _lines(capsys.readouterr().out)
    skips = [(r["node"], r["reason"], r["evicts"]) for r in lines if r["action"] == "skip"]
    assert skips == [("mig-c", "pdb", ["ml/serve-0"])]
    assert served.writes == []


def test_without_allow_evict_a_busy_node_is_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pods = [*_pending_3g(), _pod("serve-0", "nvidia.com/mig-1g.10gb", "mig-c", app="serve")]
    served = _served([_node("mig-c")], pods, [_pdb(1)])
    _run(served, tmp_path, "--apply")
    lines = _lines(capsys.readouterr().out)
    assert [(r["node"], r["reason"]) for r in lines if r["action"] == "skip"] == [
        ("mig-c", "would-evict")
    ]
    assert served.writes == []


def test_allowed_eviction_comes_before_the_label(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pods = [*_pending_3g(), _pod("serve-0", "nvidia.com/mig-1g.10gb", "mig-c", app="serve")]
    served = _served([_node("mig-c")], pods, [_pdb(1)])
    _run(served, tmp_path, "--apply", "--allow-evict")
    capsys.readouterr()
    assert [(w.method, w.path) for w in served.writes] == [
        ("POST", CM_PATH),
        ("POST", "/api/v1/namespaces/ml/pods/serve-0/eviction"),
        ("PATCH", "/api/v1/nodes/mig-c"),
        ("POST", "/api/v1/namespaces/default/events"),
    ]
    assert served.writes[1].body == {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": "serve-0", "namespace": "ml"},
    }
