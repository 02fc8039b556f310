"""``ExtenderState`` on the shipped example cluster: full-form requests reuse the nodes already
read at their resourceVersion (the bytes are not decoded again) and answer both forms alike;
a burst of pods answered through the overlay gets the very answers of the reference path."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from gpuplane.fit.extender.settings import ExtenderSettings
from gpuplane.k8s.cluster.fit_cluster import fit_cluster
from gpuplane.k8s.cluster.fit_pools import node_defaults
from gpuplane.k8s.cluster.reading import snapshot_from_files
from gpuplane.k8s.cluster.snapshot import ClusterSnapshot
from gpuplane.live.extender.handlers import handle
from gpuplane.live.extender.state import ExtenderState, node_versions
from gpuplane.live.extender.wire import read_extender_args

EXAMPLES = Path(__file__).resolve().parents[4] / "examples" / "snapshot"


@pytest.fixture(scope="module")
def snapshot() -> ClusterSnapshot:
    return snapshot_from_files([EXAMPLES / "mixed-cluster.yaml"], read_at="2026-11-20T09:00:00Z")


def _state(snapshot: ClusterSnapshot, *, reference: bool = False) -> ExtenderState:
    defaults = node_defaults(EXAMPLES / "pools.yaml", None)
    state = ExtenderState(ExtenderSettings(), defaults, reference=reference)
    state.load(fit_cluster(snapshot, defaults), node_versions(snapshot))
    return state


def _pod(i: int, gpus: int) -> dict[str, Any]:
    res = {"nvidia.com/gpu": str(gpus), "cpu": "8", "memory": "64Gi"}
    return {
        "metadata": {"name": f"p{i}", "namespace": "t", "uid": f"u{i}"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": res, "limits": res}}]},
        "status": {"phase": "Pending", "qosClass": "Guaranteed"},
    }


def test_full_form_reuses_nodes_read_at_their_version(snapshot: ClusterSnapshot) -> None:
    state = _state(snapshot)
    nodes = [copy.deepcopy(n) for n in snapshot.of("nodes")]
    body = json.dumps({"Pod": _pod(0, 1), "Nodes": {"items": nodes}}).encode()
    args = read_extender_args(body)
    kept = state.filter(args, 0.0).kept
    assert args.nodes is not None and not any(n.decoded for n in args.nodes)
    by_name = {"Pod": _pod(0, 1), "NodeNames": [n["metadata"]["name"] for n in nodes]}
    assert state.filter(read_extender_args(json.dumps(by_name).encode()), 1.0).kept == kept
    nodes[0]["metadata"]["resourceVersion"] = "changed"
    args = read_extender_args(json.dumps({"Pod": _pod(0, 1), "Nodes": {"items": nodes}}).encode())
    state.filter(args, 2.0)
    assert args.nodes is not None and [n.decoded for n in args.nodes].count(True) == 1


def test_a_burst_answers_as_the_reference_path(snapshot: ClusterSnapshot) -> None:
    fast, reference = _state(snapshot), _state(snapshot, reference=True)
    names = [n["metadata"]["name"] for n in snapshot.of("nodes")]
    for i in range(40):
        pod = _pod(i, (1, 2, 4, 1)[i % 4])
        for verb in ("filter", "prioritize"):
            body = json.dumps({"Pod": pod, "NodeNames": names}).encode()
            a, b = handle(fast, verb, body, float(i)), handle(reference, verb, body, float(i))
            assert (a.status, a.body) == (b.status, b.body)
    assert len(fast.assumed) == len(reference.assumed) > 0
