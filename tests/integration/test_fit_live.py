"""``gpuplane fit --kubeconfig``: the cluster read live (read-only) from a loopback API server
answering with objects this test writes, then the answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuplane.cli.main import run
from tests.integration.fake_apiserver import Obj, Served, kubeconfig_text, running

pytestmark = pytest.mark.integration


def _node(name: str, free_label: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                "nvidia.com/gpu.count": "8",
                "pool": free_label,
            },
        },
        "status": {
            "allocatable": {"nvidia.com/gpu": "8", "cpu": "96", "memory": "1000Gi", "pods": "110"}
        },
    }


def _pod(name: str, node: str, gpus: int) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}"},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}],
        },
        "status": {"phase": "Running"},
    }


def test_fit_reads_the_cluster_live_and_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    served = Served(
        lists={
            "/api/v1/nodes": [_node("a", "x"), _node("b", "y")],
            "/api/v1/pods": [_pod("big", "a", 6), _pod("small", "b", 2)],
            "/api/v1/namespaces": [],
            "/api/v1/services": [],
            "/api/v1/replicationcontrollers": [],
            "/apis/apps/v1/replicasets": [],
            "/apis/apps/v1/statefulsets": [],
            "/apis/scheduling.k8s.io/v1/priorityclasses": [],
            "/apis/autoscaling/v2/horizontalpodautoscalers": [],
        },
        groups={"scheduling.k8s.io": ["v1"], "apps": ["v1"], "autoscaling": ["v2"]},
    )
    workload = tmp_path / "w.yaml"
    workload.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n"
        "  containers: [{name: c, resources: {limits: {nvidia.com/gpu: 4}}}]\n"
    )
    with running(served) as url:
        config = tmp_path / "kubeconfig"
        config.write_text(kubeconfig_text({"test": url}, "test"))
        assert run(["fit", str(workload), "--kubeconfig", str(config), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    (pod,) = answer["pods"]
    assert pod["outcome"] == "fits" and pod["node"] == "b"  # a has 2 free, b has 6
    assert {m for m, _, _, _ in served.requests} == {"GET"}  # read-only
