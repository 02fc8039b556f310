"""The workload file of ``gpuplane fit``: manifests as ``kubectl apply`` takes them.

Multi-document YAML or a ``v1 List`` (``kubectl get -o yaml`` output), of Pods, Deployments,
ReplicaSets, StatefulSets (apps/v1), Jobs (batch/v1) and PodGroups (scheduler-plugins). Each is
validated as the twin's manifest reader validates it (:mod:`gpuplane.k8s.manifests.parse`); an error
names the file, line, document and field. A StatefulSet is read as its pod template and
replicas (its ``serviceName``, ``volumeClaimTemplates`` and update settings do not decide where
its pods fit; volumes are not modelled). Other kinds are refused: nothing is silently dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import read_named_file
from gpuplane.fit.expand import WorkloadObject
from gpuplane.k8s.dra.manifests import parse_dra_object
from gpuplane.k8s.field_errors import relocate
from gpuplane.k8s.manifests.parse import SUPPORTED, parse_manifest
from gpuplane.k8s.yaml_documents import YamlDocument, read_documents
from gpuplane.scheduler.framework.types import PREEMPT_LOWER_PRIORITY
from gpuplane.slicing.dra.claims import ResourceClaimTemplate

DRA_KINDS = ("ResourceClaimTemplate", "ResourceClaim")
STATEFULSET_ONLY = (
    "serviceName",
    "volumeClaimTemplates",
    "podManagementPolicy",
    "updateStrategy",
    "persistentVolumeClaimRetentionPolicy",
    "ordinals",
    "revisionHistoryLimit",
)


@dataclass(frozen=True, slots=True)
class WorkloadDocument:
    """One input object: as written (for ``-o yaml``) and as read."""

    raw: dict[str, Any]
    parsed: WorkloadObject


def _as_replica_set(doc: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    spec = dict(doc.get("spec") or {})
    dropped = tuple(k for k in STATEFULSET_ONLY if k in spec)
    for key in dropped:
        spec.pop(key)
    return {**doc, "kind": "ReplicaSet", "spec": spec}, dropped


def _serving_only(field: str) -> bool:
    """Warnings about a container's inference-server command line concern the twin's serving
    simulation, not where the pod fits."""
    return field.endswith((".args", ".command")) or ".args[" in field or ".command[" in field


def _preemption(doc: dict[str, Any]) -> str:
    spec = doc.get("spec") or {}
    if doc.get("kind") != "Pod":
        spec = ((spec.get("template") or {}).get("spec")) or {}
    value = spec.get("preemptionPolicy") if isinstance(spec, dict) else None
    return str(value) if value else PREEMPT_LOWER_PRIORITY


def _items(data: Any, source: str, line: int) -> list[tuple[Any, str]]:
    if isinstance(data, dict) and data.get("kind") == "List":
        items = data.get("items")
        if not isinstance(items, list):
            raise InputError(
                "a List without items",
                expected="items: [objects]",
                location=Location(source, line, "items"),
            )
        return [(item, f"items[{i}]") for i, item in enumerate(items)]
    return [(data, "")]


@dataclass(frozen=True, slots=True)
class Workload:
    documents: tuple[WorkloadDocument, ...]
    templates: tuple[ResourceClaimTemplate, ...]  # ResourceClaimTemplates of the file
    notes: tuple[str, ...]  # what was read but does not decide placement


def _dra_object(
    item: dict[str, Any], source: str, doc: YamlDocument, prefix: str, n: int
) -> ResourceClaimTemplate:
    try:
        value = parse_dra_object(item)
    except InputError as err:
        located = relocate(err, source, doc.line_of, prefix)
        raise InputError(
            f"document {n}: {located.problem}", expected=located.expected, location=located.location
        ) from None
    if not isinstance(value, ResourceClaimTemplate):
        raise InputError(
            "a ResourceClaim in a workload file",
            expected="ResourceClaimTemplates (claims the "
            "pods name by resourceClaimName must already be in the cluster)",
            location=Location(source, doc.line_of(prefix), prefix or None),
        )
    return value


def read_workload(path: Path) -> Workload:
    return workload_from_text(read_named_file(path, "workload YAML file"), str(path))


def workload_from_text(text: str, source: str) -> Workload:
    """The workload in ``text`` (one or more YAML documents, or a v1 List), read as
    :func:`read_workload` reads a file; ``source`` names it in messages."""
    out: list[WorkloadDocument] = []
    notes: list[str] = []
    templates: list[ResourceClaimTemplate] = []
    for n, doc in enumerate(read_documents(text, source), start=1):
        for item, prefix in _items(doc.data, source, doc.first_line):
            if not isinstance(item, dict):
                raise InputError(
                    "not a Kubernetes object",
                    expected=SUPPORTED,
                    location=Location(source, doc.line_of(prefix), prefix or None),
                )
            if item.get("kind") in DRA_KINDS:
                templates.append(_dra_object(item, source, doc, prefix, n))
                continue
            read = item
            if item.get("kind") == "StatefulSet" and item.get("apiVersion") == "apps/v1":
                read, dropped = _as_replica_set(item)
                if dropped:
                    notes.append(
                        f"{source}:{doc.line_of(prefix)}: StatefulSet fields not "
                        f"modelled: {', '.join(dropped)}"
                    )
            try:
                parsed = parse_manifest(read)
            except InputError as err:
                located = relocate(err, source, doc.line_of, prefix)
                raise InputError(
                    f"document {n}: {located.problem}",
                    expected=located.expected,
                    location=located.location,
                ) from None
            line = doc.line_of(prefix) or doc.first_line
            kind = str(item.get("kind"))
            wo = WorkloadObject(parsed.obj, kind, f"{source}:{line}", _preemption(item))
            out.append(WorkloadDocument(item, wo))
            notes.extend(
                f"{source}:{line}: {f}: {t}" for f, t in parsed.warnings if not _serving_only(f)
            )
    if not out:
        raise InputError("no objects in the file", expected=SUPPORTED, location=Location(source))
    return Workload(tuple(out), tuple(templates), tuple(notes))
