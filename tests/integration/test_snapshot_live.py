"""``gpuplane snapshot save --kubeconfig``: the real client over real HTTP to a loopback server.

The server (``fake_apiserver``) serves objects written here; the tests check the snapshot holds
exactly those (none lost or repeated across pages), the notes for what is absent, the errors
for a forbidden list and an unreachable server, and that only GET requests were sent.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from gpuplane.cli.main import run
from tests.integration.fake_apiserver import Obj, Served, kubeconfig_text, running

pytestmark = pytest.mark.integration

PODS = 1_201  # three pages of the reader's 500
KEYS = {  # snapshot key -> the plural the test serves it under
    "nodes": "nodes",
    "pods": "pods",
    "priorityClasses": "priorityclasses",
    "namespaces": "namespaces",
    "services": "services",
    "replicationControllers": "replicationcontrollers",
    "replicaSets": "replicasets",
    "statefulSets": "statefulsets",
    "nodeResourceTopologies": "noderesourcetopologies",
    "resourceSlices": "resourceslices",
    "deviceClasses": "deviceclasses",
    "resourceClaims": "resourceclaims",
    "resourceClaimTemplates": "resourceclaimtemplates",
    "podGroups": "podgroups",
    "horizontalPodAutoscalers": "horizontalpodautoscalers",
}


def _obj(api_version: str, kind: str, name: str, namespace: str | None = None) -> Obj:
    meta: Obj = {"name": name, "uid": f"uid-{kind}-{name}"}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


def _node(name: str, gpus: int) -> Obj:
    node = _obj("v1", "Node", name)
    node["metadata"]["labels"] = {
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "nvidia.com/gpu.count": str(gpus),
    }
    node["status"] = {"allocatable": {"nvidia.com/gpu": str(gpus), "cpu": "96"}}
    return node


def _pod(i: int) -> Obj:
    pod = _obj("v1", "Pod", f"p-{i:04d}", namespace=f"ns-{i % 7}")
    bound = i % 3 != 0
    pod["spec"] = {
        "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
        **({"nodeName": f"gpu-{i % 3}"} if bound else {}),
    }
    pod["status"] = {"phase": "Running" if bound else "Pending"}
    return pod


def _cluster(dra: str = "v1") -> Served:
    d = f"resource.k8s.io/{dra}"
    return Served(
        lists={
            "/api/v1/nodes": [_node(f"gpu-{i}", 8) for i in range(3)],
            "/api/v1/pods": [_pod(i) for i in range(PODS)],
            "/api/v1/namespaces": [_obj("v1", "Namespace", f"ns-{i}") for i in range(7)],
            "/api/v1/services": [_obj("v1", "Service", "web", "ml")],
            "/api/v1/replicationcontrollers": [],
            "/apis/apps/v1/replicasets": [_obj("apps/v1", "ReplicaSet", "web-5d4f", "ml")],
            "/apis/apps/v1/statefulsets": [_obj("apps/v1", "StatefulSet", "db", "ml")],
            "/apis/scheduling.k8s.io/v1/priorityclasses": [
                _obj("scheduling.k8s.io/v1", "PriorityClass", "high"),
                _obj("scheduling.k8s.io/v1", "PriorityClass", "low"),
            ],
            "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies": [
                _obj("topology.node.k8s.io/v1alpha2", "NodeResourceTopology", "gpu-0")
            ],
            f"/apis/{d}/resourceslices": [_obj(d, "ResourceSlice", f"s-{i}") for i in range(2)],
            f"/apis/{d}/deviceclasses": [_obj(d, "DeviceClass", "gpu.nvidia.com")],
            f"/apis/{d}/resourceclaims": [_obj(d, "ResourceClaim", "c", "ml")],
            f"/apis/{d}/resourceclaimtemplates": [_obj(d, "ResourceClaimTemplate", "t", "ml")],
            "/apis/scheduling.x-k8s.io/v1alpha1/podgroups": [
                _obj("scheduling.x-k8s.io/v1alpha1", "PodGroup", "gang", "ml")
            ],
            "/apis/autoscaling/v2/horizontalpodautoscalers": [
                _obj("autoscaling/v2", "HorizontalPodAutoscaler", "web", "ml")
            ],
        },
        groups={
            "scheduling.k8s.io": ["v1"],
            "apps": ["v1"],
            "topology.node.k8s.io": ["v1alpha2"],
            "resource.k8s.io": [dra],
            "scheduling.x-k8s.io": ["v1alpha1"],
            "autoscaling": ["v2", "v1"],
            # The group exists (another nvidia.com CRD) but ClusterPolicy does not: a 404 list.
            "nvidia.com": ["v1"],
        },
    )


def _save(tmp_path: Path, served: Served, *extra: str) -> tuple[int, Any]:
    out = tmp_path / "snap.json"  # JSON: quicker than YAML for 1,201 pods
    with running(served) as url:
        config = tmp_path / "kubeconfig"
        config.write_text(kubeconfig_text({"test": url}, "test"))
        rc = run(["snapshot", "save", "--kubeconfig", str(config), "--out", str(out), *extra])
    return rc, (json.loads(out.read_text()) if out.exists() else None)


def _names(objs: list[Obj]) -> list[str]:
    return [o["metadata"]["name"] for o in objs]


def test_snapshot_holds_exactly_the_served_objects(tmp_path: Path) -> None:
    served = _cluster()
    rc, snap = _save(tmp_path, served)
    assert rc == 0
    assert snap["apiVersion"] == "gpuplane.io/v1alpha1" and snap["kind"] == "ClusterSnapshot"
    objects = snap["objects"]
    by_plural = {path.rsplit("/", 1)[1]: objs for path, objs in served.lists.items()}
    for key, plural in KEYS.items():
        assert objects[key] == by_plural[plural], key
    assert objects["pods"] == served.lists["/api/v1/pods"]  # every page, in order, none twice
    assert _names(objects["nodes"]) == ["gpu-0", "gpu-1", "gpu-2"]
    assert _names(objects["resourceSlices"]) == ["s-0", "s-1"]
    assert _names(objects["podGroups"]) == ["gang"]
    assert objects["scaledObjects"] == [] and objects["clusterPolicies"] == []
    meta = snap["metadata"]
    assert meta["serverVersion"] == "v1.31.2"
    assert meta["apiVersions"]["resourceClaims"] == "resource.k8s.io/v1"
    assert meta["apiVersions"]["horizontalPodAutoscalers"] == "autoscaling/v2"
    skipped = {s["resource"]: s["reason"] for s in meta["skipped"]}
    assert set(skipped) == {"scaledObjects", "clusterPolicies"}
    assert "keda.sh" in skipped["scaledObjects"]
    assert "404" in skipped["clusterPolicies"]


def test_lists_are_paged_and_only_read(tmp_path: Path) -> None:
    served = _cluster()
    rc, _ = _save(tmp_path, served)
    assert rc == 0
    assert {r[0] for r in served.requests} == {"GET"}
    assert {r[3] for r in served.requests} == {"Bearer test-token"}
    pod_pages = [q for _, path, q, _ in served.requests if path == "/api/v1/pods"]
    assert len(pod_pages) == 3
    assert all(q["limit"] == ["500"] for q in pod_pages)
    assert "continue" not in pod_pages[0] and all("continue" in q for q in pod_pages[1:])


def test_server_pages_smaller_than_asked(tmp_path: Path) -> None:
    served = _cluster()
    served.max_page = 97  # a server may return fewer items than the limit
    rc, snap = _save(tmp_path, served)
    assert rc == 0
    assert snap["objects"]["pods"] == served.lists["/api/v1/pods"]


@pytest.mark.parametrize("dra", ["v1beta1", "v1beta2"])
def test_dra_falls_back_to_the_beta_the_server_has(tmp_path: Path, dra: str) -> None:
    rc, snap = _save(tmp_path, _cluster(dra))
    assert rc == 0
    assert snap["metadata"]["apiVersions"]["resourceSlices"] == f"resource.k8s.io/{dra}"
    assert _names(snap["objects"]["deviceClasses"]) == ["gpu.nvidia.com"]


def test_absent_dra_and_crds_are_skipped_with_notes(tmp_path: Path) -> None:
    served = _cluster()
    for group in ("resource.k8s.io", "topology.node.k8s.io", "scheduling.x-k8s.io"):
        del served.groups[group]
    rc, snap = _save(tmp_path, served)
    assert rc == 0
    skipped = {s["resource"] for s in snap["metadata"]["skipped"]}
    assert {"resourceSlices", "deviceClasses", "nodeResourceTopologies", "podGroups"} <= skipped
    assert not any(path.startswith("/apis/resource.k8s.io/") for _, path, _, _ in served.requests)


def test_forbidden_list_names_the_verb_and_resource(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    served = _cluster()
    served.forbidden.add("/api/v1/pods")
    rc, snap = _save(tmp_path, served)
    assert rc == 2 and snap is None
    message = capsys.readouterr().err
    assert "forbidden to list pods" in message
    assert "verb 'list' on pods" in message
    assert "Traceback" not in message


def test_context_selects_the_cluster(tmp_path: Path) -> None:
    served = _cluster()
    out = tmp_path / "snap.json"
    with running(served) as url:
        config = tmp_path / "kubeconfig"
        config.write_text(kubeconfig_text({"dead": _closed_port_url(), "live": url}, "dead"))
        args = ["snapshot", "save", "--kubeconfig", str(config), "--context", "live"]
        assert run([*args, "--out", str(out)]) == 0
    assert len(json.loads(out.read_text())["objects"]["nodes"]) == 3


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_unreachable_server_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text(kubeconfig_text({"dead": _closed_port_url()}, "dead"))
    rc = run(["snapshot", "save", "--kubeconfig", str(config), "--out", str(tmp_path / "s.yaml")])
    assert rc == 2
    message = capsys.readouterr().err
    assert "cannot reach the API server at http://127.0.0.1:" in message
    assert "Traceback" not in message


def test_unknown_context_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text(kubeconfig_text({"a": _closed_port_url()}, "a"))
    args = ["snapshot", "save", "--kubeconfig", str(config), "--context", "nope"]
    assert run([*args, "--out", str(tmp_path / "s.yaml")]) == 2
    assert f"{config}: contexts[nope]: cannot use this kubeconfig" in capsys.readouterr().err


def test_forbidden_discovery_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    served = _cluster()
    served.forbidden.add("/apis/resource.k8s.io")
    rc, _ = _save(tmp_path, served)
    assert rc == 2
    assert "discovery document of API group resource.k8s.io" in capsys.readouterr().err
