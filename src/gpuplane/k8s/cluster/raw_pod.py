"""A pod of a snapshot, as the API server returned it, -> the scheduler's ``PodInfo`` and
``fit``'s ``FitPod``.

Read leniently in shape (a real pod carries far more than gpuplane models, and the API server
validated it already) but strictly in what is used: a request that is not a quantity, a
priority that is not an integer, an unknown taint effect in a toleration are errors naming the
object and the field. Requests follow kube-scheduler's rule (``resource.PodRequests``: app
containers plus sidecars, or the largest init container with the sidecars before it, plus pod
overhead; a limit alone on an extended resource is its request, as API defaulting makes it).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any, cast

from gpuplane.api.owner import OwnerRef
from gpuplane.api.qos import QosClass, pod_qos_class
from gpuplane.api.taints import Toleration, TolerationOperator
from gpuplane.api.topology_spread import TopologySpreadConstraint
from gpuplane.core.errors import InputError, Location
from gpuplane.core.validation import validate_model
from gpuplane.fit.model import GPU_IDS_ANNOTATION, FitPod
from gpuplane.fit.selecting import Selecting, default_selector
from gpuplane.fit.workload_objects import POD_GROUP_LABEL
from gpuplane.k8s.cluster.api_lister import RawObject
from gpuplane.k8s.manifests.api_types import TopologySpreadConstraint as ConstraintModel
from gpuplane.k8s.manifests.quantity import parse_manifest_quantity
from gpuplane.k8s.manifests.resources import canonical_amount
from gpuplane.k8s.manifests.topology_spread import topology_spread_constraints
from gpuplane.scheduler.framework.types import (
    PREEMPT_LOWER_PRIORITY,
    ContainerInfo,
    PodInfo,
)
from gpuplane.slicing.mig.controller_types import MIG_PROFILE_ANNOTATION

LEGACY_POD_GROUP_LABEL = "pod-group.scheduling.sigs.k8s.io"
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_OPERATORS: dict[str, TolerationOperator] = {"Equal": "Equal", "Exists": "Exists"}


def fail(where: str, field: str, problem: str, expected: str | None = None) -> InputError:
    return InputError(problem, expected=expected, location=Location(where, field=field))


def timestamp(value: object, where: str, field: str) -> float | None:
    """An RFC 3339 time as Unix seconds (None when absent)."""
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise fail(where, field, f"{value!r} is not a time", "an RFC 3339 time")
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise fail(where, field, f"{value!r} is not a time", "an RFC 3339 time") from None


def _dict(value: object) -> dict[str, Any]:
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


@lru_cache(maxsize=4096)
def _amount(name: str, raw: object) -> int:
    return canonical_amount(name, parse_manifest_quantity(raw))


def _amounts(values: object, where: str, field: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, raw in _dict(values).items():
        try:
            out[str(name)] = _amount(str(name), raw)
        except (InputError, ValueError, TypeError) as exc:
            raise fail(where, f"{field}.{name}", f"invalid quantity {raw!r}: {exc}") from None
    return out


def _container(
    c: Any, where: str, field: str, init: bool
) -> tuple[ContainerInfo, dict[str, int], bool]:
    """(its requests, its limits, whether it is a sidecar)."""
    res = _dict(_dict(c).get("resources"))
    limits = _amounts(res.get("limits"), where, f"{field}.resources.limits")
    requests = _amounts(res.get("requests"), where, f"{field}.resources.requests")
    for name, amount in limits.items():
        requests.setdefault(name, amount)  # API defaulting: a limit alone sets the request
    name = str(_dict(c).get("name") or field)
    sidecar = init and _dict(c).get("restartPolicy") == "Always"
    image = str(_dict(c).get("image") or "")
    return ContainerInfo(name, requests, init and not sidecar, image), limits, sidecar


def _max_into(total: dict[str, int], amounts: Mapping[str, int]) -> None:
    for k, v in amounts.items():
        total[k] = max(total.get(k, 0), v)


def pod_requests(
    spec: Mapping[str, Any], where: str
) -> tuple[dict[str, int], tuple[ContainerInfo, ...], QosClass]:
    app: dict[str, int] = {}
    containers: list[ContainerInfo] = []
    pairs: list[tuple[Mapping[str, int], Mapping[str, int]]] = []
    for i, c in enumerate(_list(spec.get("containers"))):
        info, limits, _ = _container(c, where, f"spec.containers[{i}]", False)
        containers.append(info)
        pairs.append((info.requests, limits))
        for k, v in info.requests.items():
            app[k] = app.get(k, 0) + v
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for i, c in enumerate(_list(spec.get("initContainers"))):
        info, limits, sidecar = _container(c, where, f"spec.initContainers[{i}]", True)
        pairs.append((info.requests, limits))
        if sidecar:
            for k, v in info.requests.items():
                sidecars[k] = sidecars.get(k, 0) + v
            _max_into(init_max, sidecars)
            containers.append(ContainerInfo(info.name, info.requests, False, info.image))
        else:
            _max_into(init_max, {k: v + sidecars.get(k, 0) for k, v in info.requests.items()})
            containers.append(info)
    total = {k: app.get(k, 0) + sidecars.get(k, 0) for k in set(app) | set(sidecars)}
    _max_into(total, init_max)
    for k, v in _amounts(spec.get("overhead"), where, "spec.overhead").items():
        total[k] = total.get(k, 0) + v
    return {k: v for k, v in total.items() if v}, tuple(containers), pod_qos_class(pairs)


def _tolerations(spec: Mapping[str, Any], where: str) -> tuple[Toleration, ...]:
    out = []
    for i, t in enumerate(_list(spec.get("tolerations"))):
        t = _dict(t)
        effect = t.get("effect") or None
        if effect is not None and effect not in _EFFECTS:
            raise fail(
                where,
                f"spec.tolerations[{i}].effect",
                f"unknown effect {effect!r}",
                " or ".join(_EFFECTS),
            )
        op_text = t.get("operator") or "Equal"
        if op_text not in _OPERATORS:
            raise fail(
                where,
                f"spec.tolerations[{i}].operator",
                f"unknown operator {op_text!r}",
                "Equal or Exists",
            )
        seconds = t.get("tolerationSeconds")
        out.append(
            Toleration(
                t.get("key") or None,
                _OPERATORS[op_text],
                t.get("value"),
                effect,
                float(seconds) if isinstance(seconds, int | float) else None,
            )
        )
    return tuple(out)


def _owner(meta: Mapping[str, Any], namespace: str) -> OwnerRef | None:
    for ref in _list(meta.get("ownerReferences")):
        ref = _dict(ref)
        if ref.get("controller"):
            return OwnerRef(str(ref.get("kind", "")), str(ref.get("name", "")), namespace)
    return None


def _gpu_ids(annotations: Mapping[str, Any], where: str) -> tuple[int, ...] | None:
    text = annotations.get(GPU_IDS_ANNOTATION)
    if text is None:
        return None
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    if not all(p.isdigit() for p in parts):
        raise fail(
            where,
            f"metadata.annotations.{GPU_IDS_ANNOTATION}",
            f"{text!r} is not a list of GPU indices",
            'e.g. "0,1,2,3"',
        )
    return tuple(sorted(int(p) for p in parts))


def _priority(spec: Mapping[str, Any], classes: Mapping[str, int], default: int, where: str) -> int:
    value = spec.get("priority")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if value is not None:
        raise fail(where, "spec.priority", f"{value!r} is not an integer")
    name = spec.get("priorityClassName")
    return classes.get(str(name), default) if name else default


def _spread(spec: Mapping[str, Any], where: str) -> tuple[TopologySpreadConstraint, ...]:
    raw = spec.get("topologySpreadConstraints")
    if not raw:
        return ()
    path = "spec.topologySpreadConstraints"
    try:
        models = [validate_model(ConstraintModel, c) for c in _list(raw)]
        return topology_spread_constraints(models, path, lambda _f, _t: None)
    except InputError as err:
        field = err.location.field or path
        raise fail(
            where,
            field if field.startswith("spec.") else f"{path}.{field}",
            err.problem,
            err.expected,
        ) from None


def fit_pod(
    pod: RawObject,
    index: int,
    source: str,
    classes: Mapping[str, int],
    default_priority: int,
    selecting: Selecting | None = None,
) -> FitPod:
    meta, spec, status = (
        _dict(pod.get("metadata")),
        _dict(pod.get("spec")),
        _dict(pod.get("status")),
    )
    namespace = str(meta.get("namespace") or "default")
    name = str(meta.get("name") or "")
    where = f"{source}: objects.pods[{index}] ({namespace}/{name})"
    requests, containers, qos = pod_requests(spec, where)
    labels = {str(k): str(v) for k, v in _dict(meta.get("labels")).items()}
    group = labels.get(POD_GROUP_LABEL) or labels.get(LEGACY_POD_GROUP_LABEL)
    created = timestamp(meta.get("creationTimestamp"), where, "metadata.creationTimestamp") or 0.0
    started = timestamp(status.get("startTime"), where, "status.startTime")
    qos_text = status.get("qosClass")
    owner = _owner(meta, namespace)
    sel = default_selector(selecting, namespace, labels, owner) if selecting else None
    info = PodInfo(
        uid=str(meta.get("uid") or f"{namespace}/{name}"),
        namespace=namespace,
        name=name,
        requests=requests,
        priority=_priority(spec, classes, default_priority, where),
        created_s=created,
        node_selector={str(k): str(v) for k, v in _dict(spec.get("nodeSelector")).items()},
        tolerations=_tolerations(spec, where),
        affinity=_dict(spec.get("affinity")) or None,
        pod_group=group,
        scheduler_name=str(spec.get("schedulerName") or "default-scheduler"),
        preemption_policy=str(spec.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY),
        nominated_node=status.get("nominatedNodeName") or None,
        qos=QosClass(qos_text) if qos_text in tuple(QosClass) else qos,
        containers=containers,
        labels=labels,
        topology_spread_constraints=_spread(spec, where),
        default_spread_selector=sel,
    )
    return FitPod(
        info=info,
        node=spec.get("nodeName") or None,
        phase=str(status.get("phase") or "Pending"),
        start_s=started if started is not None else created,
        labels=labels,
        owner=owner,
        gpu_ids=_gpu_ids(_dict(meta.get("annotations")), where),
        terminating=meta.get("deletionTimestamp") is not None,
        mig_profile=str(_dict(meta.get("annotations")).get(MIG_PROFILE_ANNOTATION) or "") or None,
    )
