"""The extender and ``gpuplane fit`` give one verdict: where fit's kubelet rejects the pod on the
node kube-scheduler would pick, the extender filters that node off with the kubelet's reason, and
where fit's kubelet admits it, the extender keeps the node."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.fit.answer import answer_fit
from gpuplane.fit.expand import expand
from gpuplane.fit.extender.settings import ExtenderSettings
from gpuplane.fit.workload import FitSettings
from gpuplane.k8s.cluster.fit_cluster import fit_cluster
from gpuplane.k8s.cluster.fit_pools import node_defaults
from gpuplane.k8s.cluster.reading import snapshot_from_files
from gpuplane.k8s.fit.workload import read_workload
from gpuplane.live.extender.state import ExtenderState
from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.plugins.registry import in_tree_registry
from tests.integration.extender_server import post, serving
from tests.integration.test_extender_http import numa_pod

pytestmark = pytest.mark.integration
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "snapshot"


@pytest.mark.parametrize(("workload", "outcome"), [("numa-fails", "rejected-by-kubelet")])
def test_filter_agrees_with_fits_kubelet_verdict(workload: str, outcome: str) -> None:
    snap = snapshot_from_files([EXAMPLES / "mixed-cluster.yaml"], read_at="2026-11-20T09:00:00Z")
    defaults = node_defaults(EXAMPLES / "pools.yaml", None)
    cluster = fit_cluster(snap, defaults)
    read = read_workload(EXAMPLES / "workloads" / f"{workload}.yaml")
    fw = expand([d.parsed for d in read.documents], cluster, read.templates)
    scheduler = Scheduler([ProfileConfig()], registry=in_tree_registry())
    answer = answer_fit(scheduler, cluster, fw, FitSettings(remedies=False), profile="default")
    (pod,) = answer.pods
    assert str(pod.outcome) == outcome and pod.node is not None and pod.kubelet is not None

    state = ExtenderState(ExtenderSettings(), defaults)
    state.load(cluster)
    with serving(state) as base:
        code, result = post(base + "/gpuplane/filter", {"Pod": numa_pod(), "NodeNames": [pod.node]})
    assert code == 200 and result["Error"] == ""
    if pod.kubelet.admit:
        assert result["NodeNames"] == [pod.node]
    else:
        assert result["NodeNames"] == []
        reason = result["FailedNodes"][pod.node]
        assert "NUMA" in reason and pod.kubelet.policy.split("/")[0] in reason
