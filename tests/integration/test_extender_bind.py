"""The bind verb with ``--bind``: the extender checks that the node still fits the pod in its own
view, then creates the pod's Binding through the official client, with the body
kube-scheduler's DefaultBinder sends, and answers the server's refusal (or its own) as the
``ExtenderBindingResult`` error."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from gpuplane.cli.main import run
from gpuplane.k8s.cluster.kube_lister import KubernetesApiLister
from gpuplane.k8s.cluster.kube_writer import KubernetesApiWriter
from gpuplane.k8s.cluster.reading import snapshot_from_files
from gpuplane.live.extender.binder import WriterBinder
from tests.integration.extender_server import get, post, serving
from tests.integration.fake_apiserver import Served, Written, kubeconfig_text, running
from tests.integration.test_extender_http import EXAMPLES, H100_A, NUMA_REASON, _state, numa_pod

pytestmark = pytest.mark.integration
H100_B = "gpu-h100-b"  # where the pod of numa_pod fits


@contextmanager
def _served_with_binder(tmp_path: Path) -> Iterator[tuple[str, Served]]:
    snap = snapshot_from_files([EXAMPLES / "mixed-cluster.yaml"], read_at="2026-11-20T09:00:00Z")
    served = Served(lists={}, groups={}, accept_writes=True)
    with running(served) as api:
        kc = tmp_path / "kubeconfig"
        kc.write_text(kubeconfig_text({"fake": api}, "fake"))
        lister = KubernetesApiLister.from_kubeconfig(kc, None)
        binder = WriterBinder(KubernetesApiWriter.for_lister(lister))
        try:
            with serving(_state(snap), binder=binder) as base:
                yield base, served
        finally:
            lister.close()


def test_bind_posts_the_binding_and_answers_the_servers_refusal(tmp_path: Path) -> None:
    pod = numa_pod()
    name, uid = pod["metadata"]["name"], pod["metadata"]["uid"]
    ns = pod["metadata"].get("namespace", "default")
    with _served_with_binder(tmp_path) as (base, served):
        url = base + "/gpuplane"
        code, _ = post(url + "/filter", {"Pod": pod, "NodeNames": [H100_B]})
        assert code == 200
        args = {"PodName": name, "PodNamespace": ns, "PodUID": uid, "Node": H100_B}
        assert post(url + "/bind", args) == (200, {"Error": ""})
        code, again = post(url + "/bind", args)
        metrics = get(base + "/metrics")[1]
    assert served.writes[0] == Written(
        "POST",
        f"/api/v1/namespaces/{ns}/pods/{name}/binding",
        "application/json",
        {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": ns, "uid": uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": H100_B},
        },
    )
    assert len(served.writes) == 2 and served.bound == {f"{ns}/{name}": H100_B}
    assert code == 200
    assert again == {
        "Error": f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is '
        f'already assigned to node "{H100_B}"'
    }
    assert 'gpuplane_extender_errors_total{kind="bind",verb="bind"} 1.0' in metrics


def test_bind_needs_a_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snap = EXAMPLES / "mixed-cluster.yaml"
    code = run(["serve", "extender", "--snapshot", str(snap), "--bind"])
    assert code != 0 and "--bind needs --kubeconfig" in capsys.readouterr().err


def test_bind_checks_the_node_still_fits_before_writing(tmp_path: Path) -> None:
    """No Binding is created where the extender's view says the kubelet would reject the pod:
    on the NUMA-split node, for a pod never filtered, or once another pod bound by the extender
    took the GPUs."""
    pod = numa_pod()
    name, uid = pod["metadata"]["name"], pod["metadata"]["uid"]
    ns = pod["metadata"].get("namespace", "default")
    args = {"PodName": name, "PodNamespace": ns, "PodUID": uid}
    with _served_with_binder(tmp_path) as (base, served):
        url = base + "/gpuplane"
        unseen = post(url + "/bind", {**args, "Node": H100_B})[1]
        post(url + "/filter", {"Pod": pod, "NodeNames": [H100_A, H100_B]})
        split = post(url + "/bind", {**args, "Node": H100_A})[1]
        # A pod of 4 GPUs (all gpu-h100-b has free) bound there by the extender first.
        big = copy.deepcopy(pod)
        big["metadata"] |= {"name": "big", "uid": "big-uid"}
        for c in big["spec"]["containers"]:
            for part in ("requests", "limits"):
                c["resources"][part]["nvidia.com/gpu"] = "4"
        post(url + "/filter", {"Pod": big, "NodeNames": [H100_B]})
        big_args = {"PodName": "big", "PodNamespace": ns, "PodUID": "big-uid", "Node": H100_B}
        assert post(url + "/bind", big_args) == (200, {"Error": ""})
        taken = post(url + "/bind", {**args, "Node": H100_B})[1]
        metrics = get(base + "/metrics")[1]
    assert unseen["Error"].startswith(f"gpuplane has not seen pod {ns}/{name} (uid {uid})")
    assert split == {
        "Error": f'node "{H100_A}" no longer fits pod {ns}/{name} in gpuplane\'s view: '
        + NUMA_REASON
    }
    assert taken == {
        "Error": f'node "{H100_B}" no longer fits pod {ns}/{name} in gpuplane\'s view: '
        "only 0 free GPUs, pod asks 2"
    }
    assert [w.path.rsplit("/", 2)[-2] for w in served.writes] == ["big"]
    assert 'gpuplane_extender_errors_total{kind="bind-check",verb="bind"} 3.0' in metrics
