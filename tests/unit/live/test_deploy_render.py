"""``gpuplane deploy render``: the objects validate against Kubernetes v1.31's schemas
(kubernetes-validate), the second scheduler's configuration reads back through gpuplane's own
reader, and the RBAC is what the services need and no more."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from gpuplane.cli.main import run
from gpuplane.core.errors import InputError
from gpuplane.k8s.manifests.scheduler_config import read_scheduler_config
from gpuplane.scheduler.plugins.registry import in_tree_registry

K8S_VERSION = "1.31.0"


def _render(tmp_path: Path, target: str, *extra: str) -> dict[str, list[dict[str, Any]]]:
    out = tmp_path / target
    assert run(["deploy", "render", target, "--namespace", "gp", "--out", str(out), *extra]) == 0
    kust = yaml.safe_load((out / "kustomization.yaml").read_text())
    assert kust["kind"] == "Kustomization"
    return {
        name: [d for d in yaml.safe_load_all((out / name).read_text()) if d]
        for name in kust["resources"]
    }


@pytest.mark.parametrize("target", ["extender", "mig-controller"])
def test_objects_validate_against_the_kubernetes_schemas(tmp_path: Path, target: str) -> None:
    files = _render(tmp_path, target)
    for objects in files.values():
        for obj in objects:
            kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


def _all(files: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [o for objs in files.values() for o in objs]


def test_scheduler_config_reads_back(tmp_path: Path) -> None:
    objs = _all(_render(tmp_path, "extender"))
    cm = next(o for o in objs if o["kind"] == "ConfigMap")
    path = tmp_path / "sched.yaml"
    path.write_text(cm["data"]["config.yaml"])
    with pytest.raises(InputError, match="extenders cannot be called by fit"):
        read_scheduler_config(path, in_tree_registry())
    profiles, _ = read_scheduler_config(path, in_tree_registry(), allow_extenders=True)
    assert [p.schedulerName for p in profiles] == ["gpuplane-scheduler"]
    ext = yaml.safe_load(cm["data"]["config.yaml"])["extenders"][0]
    assert ext["urlPrefix"] == "http://gpuplane-extender.gp.svc:8888/gpuplane"
    assert (ext["filterVerb"], ext["prioritizeVerb"], ext["weight"]) == ("filter", "prioritize", 1)
    assert (ext["nodeCacheCapable"], ext["ignorable"], ext["httpTimeout"]) == (True, False, "5s")
    names = [r["name"] for r in ext["managedResources"]]
    assert "nvidia.com/gpu" in names and "nvidia.com/mig-3g.40gb" in names
    assert all(r["ignoredByScheduler"] is False for r in ext["managedResources"])


def test_extender_rbac_only_reads(tmp_path: Path) -> None:
    objs = _all(_render(tmp_path, "extender"))
    role = next(o for o in objs if o["kind"] == "ClusterRole")
    assert {v for r in role["rules"] for v in r["verbs"]} == {"get", "list", "watch"}
    dep = next(o for o in objs if o["kind"] == "Deployment" and "extender" in o["metadata"]["name"])
    args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[:4] == ["serve", "extender", "--kubeconfig", "in-cluster"]


def test_mig_controller_rbac(tmp_path: Path) -> None:
    objs = _all(_render(tmp_path, "mig-controller"))
    cluster = next(o for o in objs if o["kind"] == "ClusterRole")
    verbs = {(r["apiGroups"][0], r["resources"][0]): set(r["verbs"]) for r in cluster["rules"]}
    assert verbs[("", "nodes")] == {"get", "list", "watch", "patch"}
    assert verbs[("", "pods")] == {"get", "list", "watch"}
    assert verbs[("policy", "poddisruptionbudgets")] == {"get", "list", "watch"}
    ns_role = next(o for o in objs if o["kind"] == "Role")
    assert ns_role["metadata"]["namespace"] == "gpu-operator"
    assert {v for r in ns_role["rules"] for v in r["verbs"]} >= {"create", "update"}


def test_rendered_extender_args_are_accepted_by_the_cli() -> None:
    """The Deployment's args parse as `gpuplane serve extender` options (the bundle and the
    command must not drift apart): click parses every option before running --help, so an
    unknown one exits 2."""
    from gpuplane.cli.main import run
    from gpuplane.live.deploy.extender import _extender

    deployment = _extender("gpuplane", "gpuplane:test")[0]
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[:2] == ["serve", "extender"]
    assert run([*args, "--help"]) == 0
    assert run([*args, "--no-such-flag", "--help"]) == 2


def test_extender_with_bind_validates_and_adds_only_the_binding_write(tmp_path: Path) -> None:
    """``--bind``: the scheduler calls the extender's bind verb, the extender is served with
    --bind (still parsed by the CLI), and its role adds create on pods/binding and nothing
    else; without it, none of the three."""
    files = _render(tmp_path, "extender", "--bind")
    for obj in _all(files):
        kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
    objs = _all(files)
    role = next(o for o in objs if o["kind"] == "ClusterRole")
    writes = [r for r in role["rules"] if set(r["verbs"]) - {"get", "list", "watch"}]
    assert writes == [{"apiGroups": [""], "resources": ["pods/binding"], "verbs": ["create"]}]
    cm = next(o for o in objs if o["kind"] == "ConfigMap")
    path = tmp_path / "sched.yaml"
    path.write_text(cm["data"]["config.yaml"])
    read_scheduler_config(path, in_tree_registry(), allow_extenders=True)
    ext = yaml.safe_load(cm["data"]["config.yaml"])["extenders"][0]
    assert ext["bindVerb"] == "bind" and ext["filterVerb"] == "filter"
    dep = next(o for o in objs if o["kind"] == "Deployment" and "extender" in o["metadata"]["name"])
    args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[-1] == "--bind" and run([*args, "--help"]) == 0
    plain = _all(_render(tmp_path / "plain", "extender"))
    cm = next(o for o in plain if o["kind"] == "ConfigMap")
    assert "bindVerb" not in yaml.safe_load(cm["data"]["config.yaml"])["extenders"][0]


def test_bind_is_only_for_the_extender(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mig"
    code = run(["deploy", "render", "mig-controller", "--out", str(out), "--bind"])
    assert code == 2 and "--bind is for the extender" in capsys.readouterr().err
