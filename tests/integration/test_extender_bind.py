"""The bind verb with ``--bind``: the extender creates the pod's Binding through the official
client, with the body kube-scheduler's DefaultBinder sends, and answers the server's refusal as
the ``ExtenderBindingResult`` error."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.cli.main import run
from gpuplane.k8s.cluster.kube_lister import KubernetesApiLister
from gpuplane.k8s.cluster.kube_writer import KubernetesApiWriter
from gpuplane.k8s.cluster.reading import snapshot_from_files
from gpuplane.k8s.extender.binder import WriterBinder
from tests.integration.extender_server import get, post, serving
from tests.integration.fake_apiserver import Served, Written, kubeconfig_text, running
from tests.integration.test_extender_http import EXAMPLES, H100_A, _state, numa_pod

pytestmark = pytest.mark.integration


def test_bind_posts_the_binding_and_answers_the_servers_refusal(tmp_path: Path) -> None:
    snap = snapshot_from_files([EXAMPLES / "mixed-cluster.yaml"], read_at="2026-11-20T09:00:00Z")
    pod = numa_pod()
    name, uid = pod["metadata"]["name"], pod["metadata"]["uid"]
    ns = pod["metadata"].get("namespace", "default")
    served = Served(lists={}, groups={}, accept_writes=True)
    with running(served) as api:
        kc = tmp_path / "kubeconfig"
        kc.write_text(kubeconfig_text({"fake": api}, "fake"))
        lister = KubernetesApiLister.from_kubeconfig(kc, None)
        binder = WriterBinder(KubernetesApiWriter.for_lister(lister))
        with serving(_state(snap), binder=binder) as base:
            url = base + "/gpuplane"
            code, _ = post(url + "/filter", {"Pod": pod, "NodeNames": [H100_A]})
            assert code == 200
            args = {"PodName": name, "PodNamespace": ns, "PodUID": uid, "Node": H100_A}
            assert post(url + "/bind", args) == (200, {"Error": ""})
            code, again = post(url + "/bind", args)
            metrics = get(base + "/metrics")[1]
        lister.close()
    assert served.writes[0] == Written(
        "POST",
        f"/api/v1/namespaces/{ns}/pods/{name}/binding",
        "application/json",
        {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": ns, "uid": uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": H100_A},
        },
    )
    assert len(served.writes) == 2 and served.bound == {f"{ns}/{name}": H100_A}
    assert code == 200
    assert again == {
        "Error": f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is '
        f'already assigned to node "{H100_A}"'
    }
    assert 'gpuplane_extender_errors_total{kind="bind",verb="bind"} 1.0' in metrics


def test_bind_needs_a_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snap = EXAMPLES / "mixed-cluster.yaml"
    code = run(["serve", "extender", "--snapshot", str(snap), "--bind"])
    assert code != 0 and "--bind needs --kubeconfig" in capsys.readouterr().err
