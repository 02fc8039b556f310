"""A ``ClusterSnapshot`` (raw API objects) -> ``FitCluster`` (what ``fit`` computes on).

- Nodes: labels, ``spec.taints``, ``spec.unschedulable``, ``status.allocatable``,
  ``status.images`` (each name of each entry with its ``sizeBytes``, for ImageLocality);
  hardware from the first matching pool of ``--pools`` (exact), else inferred from GFD's labels
  (a guess, :mod:`gpuplane.topology.gfd_hardware`); kubelet configuration from the pool, else
  ``--kubelet-config``, else the kubelet's defaults.
- Pods: every pod (:mod:`gpuplane.k8s.cluster.raw_pod`); those bound to a node the snapshot
  lacks are noted and hold nothing.
- PriorityClasses give pods without ``spec.priority`` their value (the admission plugin's job in
  a real cluster); the ``globalDefault`` one is the default.
- PodGroups (scheduler-plugins) with their member counts, as Coscheduling counts them.
- DRA objects written in ``resource.k8s.io/v1`` are read as ``gpuplane dra`` reads them; other
  versions are noted as not used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpuplane.api.taints import Taint, TaintEffect
from gpuplane.core.errors import InputError
from gpuplane.fit.model import FitCluster, FitNode, FitPod
from gpuplane.fit.selecting import Selecting
from gpuplane.k8s.cluster.api_lister import RawObject
from gpuplane.k8s.cluster.fit_memo import FitMemo
from gpuplane.k8s.cluster.fit_pools import NodeDefaults, kubelet_of
from gpuplane.k8s.cluster.pod_selectors import namespace_labels, selecting
from gpuplane.k8s.cluster.raw_pod import _amounts, fail, fit_pod, timestamp
from gpuplane.k8s.cluster.snapshot import ClusterSnapshot
from gpuplane.k8s.dra.manifests import parse_dra_object, pod_claims
from gpuplane.scheduler.framework.types import PodGroupInfo
from gpuplane.slicing.dra import claims as c
from gpuplane.slicing.dra import devices as d
from gpuplane.slicing.dra.limits import API_VERSION as DRA_API_VERSION
from gpuplane.slicing.dra.pod_claims import PodClaims
from gpuplane.slicing.dra.snapshot import DraSnapshot, make_dra_snapshot
from gpuplane.topology.gfd_hardware import hardware_from_labels

_EFFECTS: tuple[TaintEffect, ...] = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_DRA_KEYS = ("resourceSlices", "deviceClasses", "resourceClaims", "resourceClaimTemplates")
_META_KEPT = ("name", "namespace", "uid", "labels", "annotations", "ownerReferences")


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _taints(spec: Mapping[str, Any], where: str) -> tuple[Taint, ...]:
    out = []
    raw = spec.get("taints") or []
    for i, t in enumerate(raw if isinstance(raw, list) else []):
        t = _dict(t)
        effect = t.get("effect")
        if effect not in _EFFECTS:
            raise fail(
                where,
                f"spec.taints[{i}].effect",
                f"unknown effect {effect!r}",
                " or ".join(_EFFECTS),
            )
        out.append(Taint(str(t.get("key", "")), str(t.get("value") or ""), effect))
    return tuple(out)


def _images(status: Mapping[str, Any], where: str) -> dict[str, int]:
    """``status.images``: every name of each entry -> its sizeBytes (a name listed twice keeps
    its first size, as kube-scheduler's cache does)."""
    out: dict[str, int] = {}
    raw = status.get("images") or []
    for i, entry in enumerate(raw if isinstance(raw, list) else []):
        entry = _dict(entry)
        size = entry.get("sizeBytes") or 0
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise fail(
                where,
                f"status.images[{i}].sizeBytes",
                f"{size!r} is not a size",
                "a number of bytes",
            )
        names = entry.get("names") or []
        for name in names if isinstance(names, list) else []:
            out.setdefault(str(name), size)
    return out


def fit_node(node: RawObject, index: int, source: str, defaults: NodeDefaults) -> FitNode:
    meta, spec, status = (
        _dict(node.get("metadata")),
        _dict(node.get("spec")),
        _dict(node.get("status")),
    )
    name = str(meta.get("name") or "")
    where = f"{source}: objects.nodes[{index}] ({name})"
    labels = {str(k): str(v) for k, v in _dict(meta.get("labels")).items()}
    pool = next((p for p in defaults.pools if p.selector.matches(labels)), None)
    hardware = pool.hardware if pool is not None and pool.hardware is not None else None
    hardware = hardware or hardware_from_labels(labels)
    section = pool.kubelet if pool is not None and pool.kubelet is not None else defaults.kubelet
    reserved = (
        pool.reserved_milli
        if pool is not None and pool.kubelet is not None
        else (defaults.kubelet_reserved_milli)
    )
    if pool is not None and pool.kubelet is not None:
        kubelet_source = pool.source
    elif defaults.kubelet is not None:
        kubelet_source = defaults.kubelet_source
    else:
        kubelet_source = "the kubelet's defaults (Topology Manager none, CPU manager none)"
    return FitNode(
        name=name,
        labels=labels,
        taints=_taints(spec, where),
        unschedulable=bool(spec.get("unschedulable")),
        allocatable=_amounts(status.get("allocatable"), where, "status.allocatable"),
        hardware=hardware,
        kubelet=kubelet_of(section, hardware.topology, reserved),
        kubelet_source=kubelet_source,
        images=_images(status, where),
    )


def _priorities(snapshot: ClusterSnapshot) -> tuple[dict[str, int], int]:
    classes: dict[str, int] = {}
    default = 0
    for pc in snapshot.of("priorityClasses"):
        name = str(_dict(pc.get("metadata")).get("name", ""))
        value = pc.get("value")
        if isinstance(value, int):
            classes[name] = value
            if pc.get("globalDefault"):
                default = value
    return classes, default


def _pod_groups(snapshot: ClusterSnapshot, pods: Sequence[FitPod]) -> dict[str, PodGroupInfo]:
    out: dict[str, PodGroupInfo] = {}
    for i, pg in enumerate(snapshot.of("podGroups")):
        meta, spec = _dict(pg.get("metadata")), _dict(pg.get("spec"))
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"
        members = [p for p in pods if p.info.group_key == key and not p.finished]
        timeout = spec.get("scheduleTimeoutSeconds")
        where = f"{snapshot.where}: objects.podGroups[{i}]"
        out[key] = PodGroupInfo(
            key=key,
            min_member=int(spec.get("minMember") or 0),
            schedule_timeout_s=float(timeout) if isinstance(timeout, int) else None,
            created_s=timestamp(meta.get("creationTimestamp"), where, "metadata.creationTimestamp")
            or 0.0,
            num_pods=len(members),
            assigned=sum(1 for p in members if p.node is not None),
        )
    return out


def _trimmed(obj: RawObject) -> dict[str, Any]:
    meta = {k: v for k, v in _dict(obj.get("metadata")).items() if k in _META_KEPT}
    return {**{k: v for k, v in obj.items() if k != "metadata"}, "metadata": meta}


def _dra(
    snapshot: ClusterSnapshot, pods: Sequence[RawObject], notes: list[str]
) -> tuple[DraSnapshot | None, dict[str, c.ResourceClaimTemplate]]:
    if not any(snapshot.of(k) for k in _DRA_KEYS):
        return None, {}
    found: list[object] = []
    for key in _DRA_KEYS:
        for i, obj in enumerate(snapshot.of(key)):
            if obj.get("apiVersion") != DRA_API_VERSION:
                notes.append(
                    f"objects.{key}[{i}]: {obj.get('apiVersion')} is not read by fit "
                    f"(only {DRA_API_VERSION})"
                )
                continue
            try:
                found.append(parse_dra_object(_trimmed(obj)))
            except InputError as err:
                raise fail(
                    f"{snapshot.where}: objects.{key}[{i}]",
                    err.location.field or "",
                    err.problem,
                    err.expected,
                ) from None
    claims: dict[str, PodClaims] = {}
    for i, pod in enumerate(pods):
        spec = _dict(pod.get("spec"))
        if spec.get("resourceClaims"):
            uid = str(_dict(pod.get("metadata")).get("uid") or "")
            try:
                claims[uid] = pod_claims(spec, _dict(pod.get("status")))
            except InputError as err:
                raise fail(
                    f"{snapshot.where}: objects.pods[{i}]",
                    err.location.field or "",
                    err.problem,
                    err.expected,
                ) from None
    templates = {v.key: v for v in found if isinstance(v, c.ResourceClaimTemplate)}
    dra = make_dra_snapshot(
        slices=[v for v in found if isinstance(v, d.ResourceSlice)],
        classes=[v for v in found if isinstance(v, c.DeviceClass)],
        claims=[v for v in found if isinstance(v, c.ResourceClaim)],
        pods=claims,
    )
    return dra, templates


def _nodes(
    snapshot: ClusterSnapshot, defaults: NodeDefaults, memo: FitMemo | None
) -> tuple[FitNode, ...]:
    out = []
    for i, raw in enumerate(snapshot.of("nodes")):
        node = memo.node(raw) if memo is not None else None
        if node is None:
            node = fit_node(raw, i, snapshot.where, defaults)
            if memo is not None:
                memo.keep_node(raw, node)
        out.append(node)
    return tuple(out)


def _pods(
    snapshot: ClusterSnapshot,
    classes: Mapping[str, int],
    default: int,
    sel: Selecting,
    memo: FitMemo | None,
) -> tuple[FitPod, ...]:
    if memo is not None:
        memo.use_context(classes, default, sel)
    out = []
    for i, raw in enumerate(snapshot.of("pods")):
        pod = memo.pod(raw) if memo is not None else None
        if pod is None:
            pod = fit_pod(raw, i, snapshot.where, classes, default, sel)
            if memo is not None:
                memo.keep_pod(raw, pod)
        out.append(pod)
    return tuple(out)


def fit_cluster(
    snapshot: ClusterSnapshot, defaults: NodeDefaults | None = None, memo: FitMemo | None = None
) -> FitCluster:
    """fit's values for ``snapshot``; with ``memo``, Node and Pod objects it has read at the
    same resourceVersion are not read again (the live informer's builds)."""
    defaults = defaults or NodeDefaults()
    notes = list(defaults.notes)
    nodes = _nodes(snapshot, defaults, memo)
    classes, default = _priorities(snapshot)
    raw_pods = snapshot.of("pods")
    sel = selecting(snapshot)
    pods = _pods(snapshot, classes, default, sel, memo)
    if memo is not None:
        memo.trim({n.name for n in nodes}, {p.info.uid for p in pods})
    names = {n.name for n in nodes}
    lost = sorted(p.info.key for p in pods if p.holds and p.node not in names)
    if lost:
        notes.append(
            f"{len(lost)} pod(s) bound to nodes the snapshot lacks hold nothing here: "
            + ", ".join(lost[:5])
        )
    guessed = sum(1 for n in nodes if n.hardware.topology is not None and not n.hardware.exact)
    if guessed:
        notes.append(
            f"{guessed} node(s) have hardware guessed from GFD labels; give them a pool "
            "hardware file (--pools) to be exact"
        )
    bare = sum(1 for n in nodes if n.gpus and n.hardware.topology is None)
    if bare:
        notes.append(
            f"{bare} GPU node(s) have no hardware model: no GPU sets, rings or NUMA "
            "verdicts for them (see each node's hardware note)"
        )
    read_at = timestamp(snapshot.read_at, snapshot.where, "metadata.readAt") or 0.0
    dra, templates = _dra(snapshot, raw_pods, notes)
    return FitCluster(
        nodes=nodes,
        pods=pods,
        pod_groups=_pod_groups(snapshot, pods),
        priority_classes=classes,
        default_priority=default,
        dra=dra,
        claim_templates=templates,
        selecting=sel,
        namespace_labels=namespace_labels(snapshot),
        now_s=read_at,
        notes=tuple(notes),
    )
