"""The snapshot's Services, ReplicationControllers, ReplicaSets and StatefulSets as the
selectors kube-scheduler's DefaultSelector combines (``fit.selecting``), and namespace
labels."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuplane.api.selectors import LabelSelector, from_match_fields
from gpuplane.fit.selecting import Selecting
from gpuplane.k8s.cluster.snapshot import ClusterSnapshot


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def meta_selector(raw: object) -> LabelSelector | None:
    """A meta/v1 LabelSelector mapping (None when absent)."""
    if not isinstance(raw, dict):
        return None
    labels = {str(k): str(v) for k, v in _dict(raw.get("matchLabels")).items()}
    exprs = []
    for e in raw.get("matchExpressions") or []:
        e = _dict(e)
        values = e.get("values")
        exprs.append(
            (
                str(e.get("key", "")),
                str(e.get("operator", "")),
                [str(v) for v in values] if isinstance(values, list) else None,
            )
        )
    return from_match_fields(labels, exprs)


def selecting(snapshot: ClusterSnapshot) -> Selecting:
    services: dict[str, list[Mapping[str, str]]] = {}
    for s in snapshot.of("services"):
        meta, spec = _dict(s.get("metadata")), _dict(s.get("spec"))
        sel = {str(k): str(v) for k, v in _dict(spec.get("selector")).items()}
        if sel:
            services.setdefault(str(meta.get("namespace") or "default"), []).append(sel)
    controllers: dict[tuple[str, str, str], tuple[Mapping[str, str], LabelSelector | None]] = {}
    for key, kind in (
        ("replicationControllers", "ReplicationController"),
        ("replicaSets", "ReplicaSet"),
        ("statefulSets", "StatefulSet"),
    ):
        for obj in snapshot.of(key):
            meta, spec = _dict(obj.get("metadata")), _dict(obj.get("spec"))
            ident = (kind, str(meta.get("namespace") or "default"), str(meta.get("name", "")))
            if kind == "ReplicationController":
                controllers[ident] = (
                    {str(k): str(v) for k, v in _dict(spec.get("selector")).items()},
                    None,
                )
            else:
                controllers[ident] = ({}, meta_selector(spec.get("selector")))
    return Selecting({k: tuple(v) for k, v in services.items()}, controllers)


def namespace_labels(snapshot: ClusterSnapshot) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for ns in snapshot.of("namespaces"):
        meta = _dict(ns.get("metadata"))
        out[str(meta.get("name", ""))] = {
            str(k): str(v) for k, v in _dict(meta.get("labels")).items()
        }
    return out
