"""``gpuplane serve extender`` over real HTTP on loopback, sent what kube-scheduler sends.

The cluster is the shipped example (examples/snapshot/mixed-cluster.yaml with pools.yaml); the
pod of examples/snapshot/workloads/numa-fails.yaml is the one ``gpuplane fit`` finds rejected
by gpu-h100-a's kubelet (two free GPUs, one per NUMA node, under single-numa-node).
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.fit.extender.settings import ExtenderSettings
from gpuplane.k8s.cluster.fit_cluster import fit_cluster
from gpuplane.k8s.cluster.fit_pools import node_defaults
from gpuplane.k8s.cluster.reading import snapshot_from_files
from gpuplane.k8s.cluster.snapshot import ClusterSnapshot
from gpuplane.live.extender.service import ServeConfig
from gpuplane.live.extender.state import ExtenderState, node_versions
from tests.integration.extender_server import get, post, serving
from tests.integration.waiting import wait_until

pytestmark = pytest.mark.integration
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "snapshot"
H100_A = "gpu-h100-a"
NUMA_REASON = "2 free GPUs on different NUMA nodes (kubelet single-numa-node would reject)"


@pytest.fixture(scope="module")
def snapshot() -> ClusterSnapshot:
    return snapshot_from_files([EXAMPLES / "mixed-cluster.yaml"], read_at="2026-11-20T09:00:00Z")


def _state(snapshot: ClusterSnapshot) -> ExtenderState:
    defaults = node_defaults(EXAMPLES / "pools.yaml", None)
    state = ExtenderState(ExtenderSettings(), defaults)
    state.load(fit_cluster(snapshot, defaults), node_versions(snapshot))
    return state


@pytest.fixture()
def url(snapshot: ClusterSnapshot) -> Any:
    with serving(_state(snapshot)) as base:
        yield base + "/gpuplane"


def numa_pod() -> dict[str, Any]:
    pod: dict[str, Any] = yaml.safe_load((EXAMPLES / "workloads" / "numa-fails.yaml").read_text())
    pod["metadata"]["uid"] = "0b7c6a52-0000-4000-8000-000000000001"
    pod["status"] = {"phase": "Pending", "qosClass": "Guaranteed"}
    return pod


def _names(snapshot: ClusterSnapshot) -> list[str]:
    return [n["metadata"]["name"] for n in snapshot.of("nodes")]


def test_filter_node_names_form_drops_the_numa_split_node(
    url: str, snapshot: ClusterSnapshot
) -> None:
    names = _names(snapshot)
    code, result = post(url + "/filter", {"Pod": numa_pod(), "Nodes": None, "NodeNames": names})
    assert code == 200
    assert result["Error"] == ""
    assert result["Nodes"] is None
    assert H100_A not in result["NodeNames"]
    assert result["FailedNodes"][H100_A] == NUMA_REASON
    every = set(result["NodeNames"]) | set(result["FailedNodes"])
    assert every | set(result["FailedAndUnresolvableNodes"]) == set(names)


def test_filter_full_form_answers_with_the_node_objects(
    url: str, snapshot: ClusterSnapshot
) -> None:
    nodes = {"metadata": {}, "items": list(snapshot.of("nodes"))}
    code, result = post(url + "/filter", {"Pod": numa_pod(), "Nodes": nodes, "NodeNames": None})
    assert code == 200 and result["Error"] == ""
    assert result["NodeNames"] is None
    kept = [n["metadata"]["name"] for n in result["Nodes"]["items"]]
    assert H100_A not in kept and kept
    assert result["Nodes"]["items"][0] == next(
        n for n in snapshot.of("nodes") if n["metadata"]["name"] == kept[0]
    )
    assert result["FailedNodes"][H100_A] == NUMA_REASON


def test_go_field_names_match_case_insensitively(url: str, snapshot: ClusterSnapshot) -> None:
    body = {"pod": numa_pod(), "nodes": None, "nodenames": _names(snapshot)}
    code, result = post(url + "/filter", body)
    assert code == 200 and result["Error"] == ""
    assert result["FailedNodes"][H100_A] == NUMA_REASON
    code, upper = post(url + "/filter", {"POD": numa_pod(), "NODENAMES": _names(snapshot)})
    assert upper["NodeNames"] == result["NodeNames"]


def test_unknown_names_fail_on_their_own(url: str) -> None:
    code, result = post(url + "/filter", {"Pod": numa_pod(), "NodeNames": ["gpu-h100-b", "new"]})
    assert code == 200 and result["Error"] == ""
    assert result["NodeNames"] == ["gpu-h100-b"]
    assert result["FailedNodes"] == {"new": "node not yet in gpuplane's cluster view"}


def test_prioritize_answers_a_bare_host_priority_list(url: str, snapshot: ClusterSnapshot) -> None:
    names = ["gpu-h100-b", "gpu-h200-a", H100_A]
    code, result = post(url + "/prioritize", {"Pod": numa_pod(), "Nodes": None, "NodeNames": names})
    assert code == 200
    assert [e["Host"] for e in result] == names
    assert all(isinstance(e["Score"], int) and 0 <= e["Score"] <= 10 for e in result)
    assert result[2]["Score"] == 0


def test_malformed_requests_get_the_protocols_error_form(url: str) -> None:
    code, result = post(url + "/filter", b"{not json")
    assert code == 200
    assert result["Error"].startswith("the request body is not JSON")
    assert result["NodeNames"] is None and result["Nodes"] is None
    code, result = post(url + "/filter", {"Pod": {"spec": {}}, "NodeNames": []})
    assert code == 200 and result["Error"] == "the pod has no metadata.name"
    code, result = post(url + "/prioritize", b"[]")
    assert code == 400 and "not an object" in result["Error"]
    bad = numa_pod()
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    code, result = post(url + "/filter", {"Pod": bad, "NodeNames": ["gpu-h100-b"]})
    assert code == 200 and "invalid quantity 'lots'" in result["Error"]
    code, result = post(url + "/nosuchverb", {})
    assert code == 404 and "unknown verb" in result["Error"]


def test_bind_without_a_binder_says_how_to_enable_it(url: str) -> None:
    body = {"PodName": "p", "PodNamespace": "t", "PodUID": "u", "Node": "gpu-h100-b"}
    code, result = post(url + "/bind", body)
    assert code == 200 and "bind is not enabled" in result["Error"]


def test_preempt_drops_nodes_where_the_victims_would_not_help(url: str) -> None:
    body = {
        "Pod": numa_pod(),
        "NodeNameToVictims": None,
        "NodeNameToMetaVictims": {
            "gpu-h100-b": {"Pods": [], "NumPDBViolations": 0},
            "elsewhere": {"Pods": [{"UID": "x"}], "NumPDBViolations": 1},
        },
    }
    code, result = post(url + "/preempt", body)
    assert code == 200
    assert result["NodeNameToMetaVictims"]["elsewhere"] == {
        "Pods": [{"UID": "x"}],
        "NumPDBViolations": 1,
    }


def test_health_readiness_and_metrics(url: str, snapshot: ClusterSnapshot) -> None:
    base = url.removesuffix("/gpuplane")
    assert get(base + "/healthz") == (200, "ok")
    assert get(base + "/readyz") == (200, "ok: 6 nodes")
    post(url + "/filter", {"Pod": numa_pod(), "NodeNames": _names(snapshot)})
    post(url + "/filter", b"nope")
    code, text = get(base + "/metrics")
    assert code == 200
    assert 'gpuplane_extender_requests_total{code="200",verb="filter"} 2.0' in text
    assert 'gpuplane_extender_errors_total{kind="bad-request",verb="filter"} 1.0' in text
    assert 'gpuplane_extender_request_duration_seconds_bucket{le="5.0",verb="filter"}' in text


def test_not_ready_until_the_first_load(snapshot: ClusterSnapshot) -> None:
    state = ExtenderState(ExtenderSettings())
    released: list[bool] = []

    def slow_load() -> Any:
        while not released:
            time.sleep(0.01)
        return fit_cluster(snapshot), {}

    with serving(state, loader=slow_load) as base:
        assert get(base + "/readyz")[0] == 503
        code, result = post(base + "/gpuplane/filter", {"Pod": numa_pod(), "NodeNames": []})
        assert code == 200 and "not read the cluster yet" in result["Error"]
        code, _ = post(base + "/gpuplane/prioritize", {"Pod": numa_pod(), "NodeNames": []})
        assert code == 503
        released.append(True)
        wait_until(lambda: get(base + "/readyz")[0] == 200, "ready after the first load")


def test_body_over_the_limit_is_refused_with_the_limit(snapshot: ClusterSnapshot) -> None:
    with serving(_state(snapshot), ServeConfig(max_body_bytes=1024)) as base:
        body = {"Pod": numa_pod(), "NodeNames": [f"n{i}" for i in range(1000)]}
        code, result = post(base + "/gpuplane/filter", body)
        assert code == 200 and "request body over 1024 bytes" in result["Error"]


def test_ten_thousand_nodes_in_the_full_form(snapshot: ClusterSnapshot) -> None:
    template = next(n for n in snapshot.of("nodes") if n["metadata"]["name"] == "gpu-h100-b")
    items = []
    for i in range(10_000):
        node = copy.deepcopy(template)
        node["metadata"]["name"] = f"gpu-{i:05d}"
        node["metadata"]["resourceVersion"] = str(i + 1)
        items.append(node)
    # About 1 s of CPU (docs/benchmarks.md), but no test asserts a timing: on a busy machine
    # the default 4 s deadline can pass. What is checked is that such a body is read whole.
    with serving(_state(snapshot), ServeConfig(deadline_s=120)) as base:
        body = {"Pod": numa_pod(), "Nodes": {"metadata": {}, "items": items}, "NodeNames": None}
        code, result = post(base + "/gpuplane/filter", body)
    assert code == 200 and result["Error"] == ""
    assert len(result["Nodes"]["items"]) == 10_000  # empty H100 nodes of the training pool
