"""Pod templates (and bare Pods' specs) -> ``gpuplane.fit.workload_objects.PodTemplate``.

Validation and defaulting follow the API server, checked against kubernetes/kubernetes (read
through the code index): ``pkg/apis/core/v1/defaults.go`` (``SetDefaults_PodSpec``: restartPolicy
Always, terminationGracePeriodSeconds 30, schedulerName default-scheduler; ``SetDefaults_Pod``:
requests from limits), ``pkg/apis/core/v1/validation/validation.go`` (``ValidateTolerations``,
pod ``activeDeadlineSeconds`` in 1..2^31-1, ``validateOverhead``,
``validateTopologySpreadConstraints``: ``k8s.manifests.topology_spread``) and the "ephemeral
containers cannot be set on create" rule. Messages are the upstream ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.api.taints import TaintEffect, Toleration
from gpuplane.api.validation import (
    dns1123_label_errors,
    dns1123_subdomain_errors,
    qualified_name_errors,
)
from gpuplane.core.errors import InputError
from gpuplane.fit.workload_objects import POD_GROUP_LABEL, ContainerSpec, PodTemplate, RestartPolicy
from gpuplane.k8s.dra.manifests import pod_claims as dra_pod_claims
from gpuplane.k8s.field_errors import fail
from gpuplane.k8s.manifests.api_types import Container, ObjectMeta, PodSpec, PodTemplateSpec
from gpuplane.k8s.manifests.api_types import Toleration as TolerationModel
from gpuplane.k8s.manifests.container_checks import check_claim_names, check_container
from gpuplane.k8s.manifests.inference_args import inference_server, looks_like_server
from gpuplane.k8s.manifests.labels import check_annotations, check_labels, label_value_error
from gpuplane.k8s.manifests.quantity import parse_manifest_quantity
from gpuplane.k8s.manifests.resources import container_resources, parse_resource_list
from gpuplane.k8s.manifests.topology_spread import topology_spread_constraints
from gpuplane.serving.engine.startup import tp_startup_error
from gpuplane.serving.inference_server import InferenceServerSpec
from gpuplane.serving.models.catalog import resolve_model

# scheduler-plugins before v0.24 named the coscheduling label after its old API group.
LEGACY_POD_GROUP_LABEL = "pod-group.scheduling.sigs.k8s.io"
DEFAULT_SCHEDULER = "default-scheduler"
DEFAULT_GRACE_S = 30
_EFFECTS: dict[str, TaintEffect] = {
    "NoSchedule": "NoSchedule",
    "PreferNoSchedule": "PreferNoSchedule",
    "NoExecute": "NoExecute",
}
_RESTART_POLICIES = tuple(p.value for p in RestartPolicy)
INT32_MAX = 2**31 - 1


def dns_subdomain_error(value: str) -> str | None:
    errors = dns1123_subdomain_errors(value)
    return errors[0] if errors else None


def dns_label_error(value: str) -> str | None:
    errors = dns1123_label_errors(value)
    return errors[0] if errors else None


@dataclass(slots=True)
class Warnings:
    """Things the twin accepts but does not model: (field path, text), collected while reading."""

    items: list[tuple[str, str]] = field(default_factory=list)

    def add(self, field_path: str, text: str) -> None:
        self.items.append((field_path, text))


def template_labels(meta: ObjectMeta | None, path: str, warnings: Warnings) -> dict[str, str]:
    """Labels of a pod (template), with the legacy PodGroup label renamed to the current one."""
    labels = dict(meta.labels or {}) if meta is not None else {}
    check_labels(labels, f"{path}.labels")
    if meta is not None and meta.annotations:
        check_annotations(meta.annotations, f"{path}.annotations")
    if LEGACY_POD_GROUP_LABEL in labels and POD_GROUP_LABEL not in labels:
        labels[POD_GROUP_LABEL] = labels.pop(LEGACY_POD_GROUP_LABEL)
        warnings.add(
            f"{path}.labels",
            f"{LEGACY_POD_GROUP_LABEL} is the label of scheduler-plugins before v0.24; read as "
            f"{POD_GROUP_LABEL}",
        )
    return labels


def _containers(
    items: list[Container] | None, path: str, seen: set[str], warnings: Warnings, init: bool
) -> tuple[ContainerSpec, ...]:
    out: list[ContainerSpec] = []
    for i, c in enumerate(items or ()):
        where = f"{path}[{i}]"
        problem = dns_label_error(c.name)
        if problem is not None:
            raise fail(f"container name {c.name!r}: {problem}", f"{where}.name")
        if c.name in seen:
            raise fail(f"Duplicate value: {c.name!r}", f"{where}.name", "unique container names")
        seen.add(c.name)
        check_container(c, where)
        res = c.resources
        parsed = container_resources(
            res.requests if res else None, res.limits if res else None, f"{where}.resources"
        )
        if init and c.restart_policy == "Always":
            warnings.add(where, "a sidecar (restartPolicy: Always) is modelled as init container")
        out.append(
            ContainerSpec(
                name=c.name,
                requests=parsed.requests,
                limits=parsed.limits,
                image=c.image or "",
            )
        )
    return tuple(out)


def _toleration(t: TolerationModel, where: str) -> Toleration:
    key, operator, value = t.key or "", t.operator or "Equal", t.value or ""
    if key and qualified_name_errors(key):
        raise fail(f"toleration key {key!r}: {qualified_name_errors(key)[0]}", f"{where}.key")
    if not key and operator != "Exists":
        raise fail(
            'operator must be Exists when `key` is empty, which means "match all values and all '
            'keys"',
            f"{where}.operator",
        )
    if t.toleration_seconds is not None and t.effect != "NoExecute":
        raise fail("effect must be 'NoExecute' when `tolerationSeconds` is set", f"{where}.effect")
    if operator == "Exists":
        if value:
            raise fail("value must be empty when `operator` is 'Exists'", f"{where}.operator")
    elif operator == "Equal":
        problem = label_value_error(value)
        if problem is not None:
            raise fail(f"toleration value {value!r}: {problem}", f"{where}.value")
    else:
        raise fail(f"Unsupported value: {operator!r}", f"{where}.operator", '"Equal", "Exists"')
    if t.effect and t.effect not in _EFFECTS:
        raise fail(f"Unsupported value: {t.effect!r}", f"{where}.effect", ", ".join(_EFFECTS))
    return Toleration(
        key=key or None,
        operator="Exists" if operator == "Exists" else "Equal",
        value=value or None,
        effect=_EFFECTS.get(t.effect or ""),
        toleration_seconds=None if t.toleration_seconds is None else float(t.toleration_seconds),
    )


def _check_scalars(spec: PodSpec, path: str) -> None:
    if spec.restart_policy is not None and spec.restart_policy not in _RESTART_POLICIES:
        raise fail(
            f"Unsupported value: {spec.restart_policy!r}",
            f"{path}.restartPolicy",
            ", ".join(f'"{p}"' for p in _RESTART_POLICIES),
        )
    grace = spec.termination_grace_period_seconds
    if grace is not None and grace < 0:
        field = f"{path}.terminationGracePeriodSeconds"
        raise fail(f"{grace}: must be greater than or equal to 0", field)
    deadline = spec.active_deadline_seconds
    if deadline is not None and not 1 <= deadline <= INT32_MAX:
        raise fail(
            f"{deadline}: must be between 1 and {INT32_MAX}, inclusive",
            f"{path}.activeDeadlineSeconds",
        )
    if spec.priority_class_name:
        problem = dns_subdomain_error(spec.priority_class_name)
        if problem is not None:
            raise fail(f"{spec.priority_class_name!r}: {problem}", f"{path}.priorityClassName")
    if spec.preemption_policy not in (None, "PreemptLowerPriority", "Never"):
        raise fail(
            f"Unsupported value: {spec.preemption_policy!r}",
            f"{path}.preemptionPolicy",
            '"Never", "PreemptLowerPriority"',
        )
    if spec.ephemeral_containers:
        raise fail("cannot be set on create", f"{path}.ephemeralContainers")


def _unmodelled(spec: PodSpec, path: str, warnings: Warnings) -> None:
    if spec.resources is not None:
        warnings.add(
            f"{path}.resources",
            "pod-level resources (PodLevelResources) are not modelled; the twin uses the "
            "containers' resources",
        )
    if spec.node_name:
        warnings.add(f"{path}.nodeName", "a preset nodeName is ignored; the twin schedules the pod")
    if spec.scheduling_gates:
        warnings.add(f"{path}.schedulingGates", "scheduling gates are not modelled")
    if spec.active_deadline_seconds is not None:
        warnings.add(
            f"{path}.activeDeadlineSeconds",
            "a pod-level deadline is not modelled (a Job's spec.activeDeadlineSeconds is)",
        )


def translate_template(
    template: PodTemplateSpec | None, path: str, warnings: Warnings
) -> PodTemplate:
    """A PodTemplateSpec (``path`` is its field path, e.g. ``spec.template``) -> PodTemplate."""
    meta = template.metadata if template is not None else None
    spec = template.spec if template is not None and template.spec is not None else PodSpec()
    return translate_pod(meta, spec, f"{path}.metadata", f"{path}.spec", warnings)


GPU_MEMORY_ANNOTATION = "gpuplane.io/gpu-memory"


def _server(
    spec: PodSpec, labels: dict[str, str], path: str, warnings: Warnings
) -> InferenceServerSpec | None:
    """The first app container that runs vLLM or SGLang."""
    for i, c in enumerate(spec.containers or ()):
        where = f"{path}.containers[{i}]"
        found = inference_server(c.name, c.image, c.command, c.args, labels, where)
        if found is not None:
            return found
        kind = looks_like_server(c.image, c.command, c.args)
        if kind is not None:
            warnings.add(
                f"{where}.args",
                f"a {kind} server without --model"
                f"{'-path' if kind == 'sglang' else ''} in its args: the twin runs no engine "
                "for it (a serving: service cannot use this Deployment)",
            )
    return None


def _checked_server(
    server: InferenceServerSpec | None,
    containers: tuple[ContainerSpec, ...],
    path: str,
    warnings: Warnings,
) -> InferenceServerSpec | None:
    """A server that would exit at start-up (``serving.engine.startup``) is a warning: the API
    server accepts the pod, which then crash-loops."""
    if server is None:
        return None
    gpus = sum(c.limits.get(NVIDIA_GPU, 0) for c in containers)
    try:
        shape = resolve_model(server.model)
    except InputError:
        return server  # an unknown model is reported where the serving section needs it
    refused = tp_startup_error(shape, server.tensor_parallel_size, gpus or None)
    if refused is not None:
        warnings.add(
            f"{path}.containers",
            f"{server.kind} exits at start-up and the pod crash-loops: {refused}",
        )
    return server


def _gpu_memory(meta: ObjectMeta | None, meta_path: str) -> int:
    """The pod's peak GPU memory from gpuplane's annotation (e.g. ``20Gi``); 0 when absent."""
    raw = (meta.annotations or {}).get(GPU_MEMORY_ANNOTATION) if meta is not None else None
    if raw is None:
        return 0
    where = f"{meta_path}.annotations.{GPU_MEMORY_ANNOTATION}"
    try:
        quantity = parse_manifest_quantity(raw)
    except InputError as err:
        raise fail(err.problem, where, "a quantity such as 20Gi") from None
    if quantity.sign() < 0:
        raise fail(f"{raw!r} is negative", where, "a quantity such as 20Gi")
    try:
        return quantity.value()
    except ValueError:
        raise fail(f"{raw!r} is too large", where, "a quantity such as 20Gi") from None


def translate_pod(
    meta: ObjectMeta | None, spec: PodSpec, meta_path: str, path: str, warnings: Warnings
) -> PodTemplate:
    """A pod's metadata and spec -> PodTemplate, validated and defaulted like the API server."""
    labels = template_labels(meta, meta_path, warnings)
    if not spec.containers:
        raise fail("Required value: a pod needs at least one container", f"{path}.containers")
    _check_scalars(spec, path)
    _unmodelled(spec, path, warnings)
    seen: set[str] = set()
    containers = _containers(spec.containers, f"{path}.containers", seen, warnings, init=False)
    init = _containers(spec.init_containers, f"{path}.initContainers", seen, warnings, init=True)
    node_selector = dict(spec.node_selector or {})
    check_labels(node_selector, f"{path}.nodeSelector")
    tolerations = tuple(
        _toleration(t, f"{path}.tolerations[{i}]") for i, t in enumerate(spec.tolerations or ())
    )
    grace = spec.termination_grace_period_seconds
    claims = (
        dra_pod_claims({"resourceClaims": spec.resource_claims}, path=path).resource_claims
        if spec.resource_claims is not None
        else ()
    )
    server = _server(spec, labels, path, warnings)
    claim_names = [c.name for c in claims]
    check_claim_names(spec.containers, claim_names, f"{path}.containers")
    check_claim_names(spec.init_containers or [], claim_names, f"{path}.initContainers")
    return PodTemplate(
        gpu_memory_bytes=_gpu_memory(meta, meta_path),
        resource_claims=claims,
        inference=_checked_server(server, containers, path, warnings),
        labels=labels,
        annotations=dict(meta.annotations or {}) if meta is not None else {},
        containers=containers,
        init_containers=init,
        priority=spec.priority or 0,
        priority_class_name=spec.priority_class_name or None,
        scheduler_name=spec.scheduler_name or DEFAULT_SCHEDULER,
        node_selector=node_selector,
        tolerations=tolerations,
        affinity=spec.affinity.as_api() if spec.affinity is not None else None,
        topology_spread_constraints=topology_spread_constraints(
            spec.topology_spread_constraints, f"{path}.topologySpreadConstraints", warnings.add
        ),
        restart_policy=RestartPolicy(spec.restart_policy or RestartPolicy.ALWAYS.value),
        termination_grace_period_s=float(DEFAULT_GRACE_S if grace is None else grace),
        overhead=parse_resource_list(spec.overhead, f"{path}.overhead"),
    )
