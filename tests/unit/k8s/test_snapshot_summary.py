"""``snapshot show``'s numbers (GPU models, allocatable vs requested, pending) and the pod
request rule they use; the live reader's version choice over an in-memory ``ApiLister``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from gpuplane.core.errors import InputError
from gpuplane.k8s.cluster.api_lister import ListNotFound, RawObject
from gpuplane.k8s.cluster.catalogue import SNAPSHOT_KEYS
from gpuplane.k8s.cluster.live_reader import read_live
from gpuplane.k8s.cluster.pod_requests import pod_request
from gpuplane.k8s.cluster.snapshot import ClusterSnapshot
from gpuplane.k8s.cluster.snapshot_summary import NO_GPU, UNKNOWN_NODE, summarise

GPU = "nvidia.com/gpu"


def _container(request: str | None = None, limit: str | None = None, **extra: Any) -> Any:
    resources: dict[str, Any] = {}
    if request is not None:
        resources["requests"] = {GPU: request}
    if limit is not None:
        resources["limits"] = {GPU: limit}
    return {"name": "c", "resources": resources, **extra}


def _pod(
    name: str,
    containers: list[Any],
    node: str | None = None,
    phase: str = "Running",
    init: list[Any] | None = None,
) -> RawObject:
    spec: dict[str, Any] = {"containers": containers, "initContainers": init or []}
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": spec,
        "status": {"phase": phase},
    }


def _node(name: str, product: str | None, gpus: int) -> RawObject:
    labels = (
        {"nvidia.com/gpu.product": product, "nvidia.com/gpu.count": str(gpus)} if product else {}
    )
    alloc = {GPU: str(gpus)} if product else {}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": alloc},
    }


def _snapshot(nodes: list[RawObject], pods: list[RawObject]) -> ClusterSnapshot:
    objects = {k: () for k in SNAPSHOT_KEYS} | {"nodes": tuple(nodes), "pods": tuple(pods)}
    return ClusterSnapshot("test", "", None, {}, (), objects)


def test_pod_request_follows_aggregate_container_requests() -> None:
    assert pod_request(_pod("a", [_container("1"), _container(limit="2")]), GPU) == 3
    # An init container's request counts when it is the largest.
    assert pod_request(_pod("b", [_container("1")], init=[_container("4")]), GPU) == 4
    # A sidecar (restartable init container) adds to the app containers and to later inits.
    sidecar = _container("1", restartPolicy="Always")
    assert pod_request(_pod("c", [_container("2")], init=[sidecar, _container("2")]), GPU) == 3
    assert pod_request(_pod("d", [_container()]), GPU) == 0


def test_an_invalid_quantity_names_its_field() -> None:
    with pytest.raises(InputError) as exc:
        pod_request(_pod("a", [_container("two")]), GPU)
    assert exc.value.location.field == f"spec.containers[0].resources.requests.{GPU}"


def test_summary_counts_bound_unfinished_and_pending_pods() -> None:
    nodes = [
        _node("h1", "H100", 8),
        _node("h2", "H100", 8),
        _node("a1", "A100", 4),
        _node("cpu", None, 0),
    ]
    pods = [
        _pod("run", [_container("4")], node="h1"),
        _pod("start", [_container("2")], node="h2", phase="Pending"),  # bound, not started
        _pod("done", [_container("8")], node="a1", phase="Succeeded"),
        _pod("failed", [_container("8")], node="a1", phase="Failed"),
        _pod("wait", [_container("8")], phase="Pending"),
        _pod("web", [_container()], node="cpu"),
        _pod("elsewhere", [_container("1")], node="gone"),
    ]
    summary = summarise(_snapshot(nodes, pods))
    rows = {
        m.model: (m.nodes, m.gpus_labelled, m.gpus_allocatable, m.gpus_requested)
        for m in summary.models
    }
    assert rows == {
        "A100": (1, 4, 4, 0),
        "H100": (2, 16, 16, 6),
        NO_GPU: (1, 0, 0, 0),
        UNKNOWN_NODE: (0, 0, 0, 1),
    }
    assert summary.pods == 7 and summary.bound_pods == 4
    assert [(p.name, p.gpus) for p in summary.pending] == [("wait", 8)]
    assert summary.as_dict()["pendingCount"] == 1


def test_a_bad_node_quantity_is_located_in_the_snapshot() -> None:
    node = _node("h1", "H100", 8)
    node["status"]["allocatable"][GPU] = "eight"
    with pytest.raises(InputError) as exc:
        summarise(_snapshot([node], []))
    assert exc.value.location.field == f"objects.nodes[0].status.allocatable.{GPU}"


class _Lister:
    """An in-memory ApiLister: groups and list paths, nothing else."""

    def __init__(self, groups: dict[str, tuple[str, ...]], lists: dict[str, list[RawObject]]):
        self.groups = groups
        self.lists = lists

    def server_version(self) -> str | None:
        return "v1.32.0"

    def group_versions(self, group: str) -> tuple[str, ...] | None:
        return self.groups.get(group)

    def list(self, path: str, *, limit: int) -> Iterator[RawObject]:
        if path not in self.lists:
            raise ListNotFound(path)
        yield from self.lists[path]


def test_live_reader_prefers_v1_and_explains_what_it_skips() -> None:
    lister = _Lister(
        groups={"resource.k8s.io": ("v1beta2", "v1"), "keda.sh": ("v1beta9",)},
        lists={
            "/api/v1/nodes": [_node("h1", "H100", 8)],
            "/api/v1/pods": [],
            "/apis/resource.k8s.io/v1/resourceslices": [],
        },
    )
    snap = read_live(lister, source="mem", read_at="t")
    assert snap.api_versions["resourceSlices"] == "resource.k8s.io/v1"
    reasons = {s.resource: s.reason for s in snap.skipped}
    assert reasons["scaledObjects"] == "the server serves keda.sh v1beta9, not keda.sh/v1alpha1"
    assert reasons["deviceClasses"] == ("not found: /apis/resource.k8s.io/v1/deviceclasses (404)")
    assert reasons["priorityClasses"].startswith("API group not served")
    assert reasons["clusterPolicies"].startswith("CRD not installed")
    assert set(snap.objects) == set(SNAPSHOT_KEYS) and snap.server_version == "v1.32.0"
