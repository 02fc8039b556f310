"""What ``gpuplane snapshot show`` prints: nodes by GPU model, GPUs allocatable and requested,
pending pods, and what the snapshot skipped.

The GPU model and count come from GPU Feature Discovery's labels (``nvidia.com/gpu.product``,
``nvidia.com/gpu.count``); allocatable GPUs from the node's ``status.allocatable`` of
``nvidia.com/gpu``. Requested GPUs are those of pods bound to a node and not finished
(``Succeeded``/``Failed`` pods hold nothing, as the scheduler counts). Pending pods are the
unbound ones in phase ``Pending``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.core.errors import InputError, Location
from gpuplane.k8s.cluster.api_lister import RawObject
from gpuplane.k8s.cluster.pod_requests import pod_request
from gpuplane.k8s.cluster.snapshot import ClusterSnapshot, Skipped
from gpuplane.k8s.manifests.quantity import parse_manifest_quantity

PRODUCT_LABEL = "nvidia.com/gpu.product"
COUNT_LABEL = "nvidia.com/gpu.count"
NO_GPU = "(no GPU label)"
UNKNOWN_NODE = "(node not in the snapshot)"  # a pod bound to a node the dump left out
FINISHED = ("Succeeded", "Failed")


@dataclass(frozen=True, slots=True)
class ModelRow:
    model: str
    nodes: int
    gpus_labelled: int  # sum of nvidia.com/gpu.count labels
    gpus_allocatable: int
    gpus_requested: int  # by bound, unfinished pods


@dataclass(frozen=True, slots=True)
class PendingPod:
    namespace: str
    name: str
    gpus: int


@dataclass(frozen=True, slots=True)
class SnapshotSummary:
    source: str
    read_at: str
    server_version: str | None
    models: tuple[ModelRow, ...]
    pods: int
    bound_pods: int
    pending: tuple[PendingPod, ...]
    skipped: tuple[Skipped, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "readAt": self.read_at,
            "serverVersion": self.server_version,
            "gpuModels": [
                {
                    "model": m.model,
                    "nodes": m.nodes,
                    "gpusLabelled": m.gpus_labelled,
                    "gpusAllocatable": m.gpus_allocatable,
                    "gpusRequested": m.gpus_requested,
                }
                for m in self.models
            ],
            "pods": self.pods,
            "boundPods": self.bound_pods,
            "pendingCount": len(self.pending),
            "pending": [
                {"namespace": p.namespace, "name": p.name, "gpus": p.gpus} for p in self.pending
            ],
            "skipped": [s.as_dict() for s in self.skipped],
        }


def _meta(obj: RawObject) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _located(exc: InputError, key: str, i: int, source: str) -> InputError:
    field = f"objects.{key}[{i}]" + (f".{exc.location.field}" if exc.location.field else "")
    return InputError(exc.problem, expected=exc.expected, location=Location(source, field=field))


def _node_gpus(node: RawObject, i: int, source: str) -> tuple[str, int, int]:
    """(model, labelled count, allocatable nvidia.com/gpu) of one node."""
    labels = _meta(node).get("labels") or {}
    model = str(labels.get(PRODUCT_LABEL) or NO_GPU)
    count_text = str(labels.get(COUNT_LABEL) or "0")
    count = int(count_text) if count_text.isdigit() else 0
    status = node.get("status") or {}
    allocatable = (status.get("allocatable") or {}) if isinstance(status, dict) else {}
    try:
        gpus = parse_manifest_quantity(allocatable.get(NVIDIA_GPU)).value()
    except (InputError, ValueError) as exc:
        where = Location(field=f"status.allocatable.{NVIDIA_GPU}")
        raise _located(
            InputError(f"invalid quantity: {exc}", location=where), "nodes", i, source
        ) from exc
    return model, count, gpus


def summarise(snapshot: ClusterSnapshot) -> SnapshotSummary:
    model_of: dict[str, str] = {}
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for i, node in enumerate(snapshot.of("nodes")):
        model, count, gpus = _node_gpus(node, i, snapshot.where)
        model_of[str(_meta(node).get("name"))] = model
        row = rows[model]
        row[0] += 1
        row[1] += count
        row[2] += gpus
    bound = 0
    pending: list[PendingPod] = []
    for i, pod in enumerate(snapshot.of("pods")):
        spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
        status = pod.get("status") if isinstance(pod.get("status"), dict) else {}
        phase = str((status or {}).get("phase") or "Pending")
        node_name = (spec or {}).get("nodeName")
        try:
            gpus = pod_request(pod, NVIDIA_GPU)
        except InputError as exc:
            raise _located(exc, "pods", i, snapshot.where) from exc
        if node_name and phase not in FINISHED:
            bound += 1
            rows[model_of.get(str(node_name), UNKNOWN_NODE)][3] += gpus
        elif not node_name and phase == "Pending":
            meta = _meta(pod)
            pending.append(
                PendingPod(str(meta.get("namespace") or ""), str(meta.get("name") or ""), gpus)
            )
    models = tuple(
        ModelRow(m, r[0], r[1], r[2], r[3]) for m, r in sorted(rows.items(), key=lambda kv: kv[0])
    )
    return SnapshotSummary(
        source=snapshot.source,
        read_at=snapshot.read_at,
        server_version=snapshot.server_version,
        models=models,
        pods=len(snapshot.of("pods")),
        bound_pods=bound,
        pending=tuple(sorted(pending, key=lambda p: (p.namespace, p.name))),
        skipped=snapshot.skipped,
    )
