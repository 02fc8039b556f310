"""Workload manifests (Pod, Job, Deployment, ReplicaSet, PodGroup) -> the twin's spec
(``gpuplane.twin.scenario.spec``).

:func:`parse_manifest` reads one document the way ``kubectl apply`` + the API server would: real
fields accepted, typos rejected, defaults applied, and the API server's validation run on what the
twin uses (resources, selectors, restart policies, Job and Deployment settings). Errors carry the
field path inside the manifest; :func:`load_manifest` places them in a file at a line.

The modules behind it: ``api_types`` (core types), ``workload_manifests`` (controller specs),
``pod_manifest`` (pod template -> PodTemplate), ``resources`` and ``quantity`` (resource rules).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pydantic import Field, StrictStr

from gpuplane.core.errors import InputError
from gpuplane.fit import workload_objects as wo
from gpuplane.k8s.field_errors import LineOf, fail, join_path, relocate, validate_model
from gpuplane.k8s.manifests import workloads as wm
from gpuplane.k8s.manifests.api_types import K8sModel, ObjectMeta, PodSpec, PodTemplateSpec
from gpuplane.k8s.manifests.labels import (
    LabelSelector,
    check_annotations,
    check_labels,
    check_selector,
)
from gpuplane.k8s.manifests.pod import (
    INT32_MAX,
    Warnings,
    dns_label_error,
    dns_subdomain_error,
    translate_pod,
    translate_template,
)
from gpuplane.k8s.manifests.resources import parse_resource_list

POD_GROUP_VERSIONS = ("scheduling.x-k8s.io/v1alpha1", "scheduling.sigs.k8s.io/v1alpha1")
KINDS = {
    "Pod": ("v1",),
    "Job": ("batch/v1",),
    "Deployment": ("apps/v1",),
    "ReplicaSet": ("apps/v1",),
    "PodGroup": POD_GROUP_VERSIONS,
}
SUPPORTED = "a Pod (v1), Job (batch/v1), Deployment or ReplicaSet (apps/v1), or PodGroup " + (
    "(scheduling.x-k8s.io/v1alpha1)"
)
_JOB_LABELS = ("job-name", "batch.kubernetes.io/job-name")


class _Object(K8sModel):
    api_version: StrictStr = Field(alias="apiVersion", description="e.g. apps/v1")
    kind: StrictStr = Field(description="e.g. Deployment")
    metadata: ObjectMeta | None = None
    status: Any = None


class Pod(_Object):
    spec: PodSpec | None = None


class Job(_Object):
    spec: wm.JobSpec | None = None


class Deployment(_Object):
    spec: wm.DeploymentSpec | None = None


class ReplicaSet(_Object):
    spec: wm.ReplicaSetSpec | None = None


class PodGroup(_Object):
    spec: wm.PodGroupSpec | None = None


@dataclass(frozen=True, slots=True)
class ParsedManifest:
    obj: wo.WorkloadObject
    kind: str
    # (field path inside the manifest, text): what the twin accepts but does not model.
    warnings: tuple[tuple[str, str], ...] = ()


def _object_meta(meta: ObjectMeta | None, *, max_name: int = 253) -> tuple[str, str]:
    """(name, namespace) with ValidateObjectMeta's rules; generateName stands in for a name."""
    meta = meta or ObjectMeta()
    name = meta.name or meta.generate_name or ""
    if not name:
        raise fail("Required value: name or generateName is required", "metadata.name")
    field = "metadata.name" if meta.name else "metadata.generateName"
    problem = dns_subdomain_error(name.rstrip("-") if not meta.name else name)
    if problem is None and len(name) > max_name:
        problem = f"must be no more than {max_name} characters"
    if problem is not None:
        raise fail(f"{name!r}: {problem}", field)
    namespace = meta.namespace or "default"
    problem = dns_label_error(namespace)
    if problem is not None:
        raise fail(f"{namespace!r}: {problem}", "metadata.namespace")
    check_labels(meta.labels or {}, "metadata.labels")
    check_annotations(meta.annotations or {}, "metadata.annotations")
    return name, namespace


def _pod(doc: Pod, warnings: Warnings) -> wo.PodSpecObject:
    name, namespace = _object_meta(doc.metadata)
    template = translate_pod(doc.metadata, doc.spec or PodSpec(), "metadata", "spec", warnings)
    return wo.PodSpecObject(name=name, namespace=namespace, template=template)


def _job_counts(spec: wm.JobSpec) -> tuple[int | None, int]:
    """SetDefaults_Job: both unset -> 1/1; parallelism unset -> 1; completions may stay unset."""
    for key, value in (
        ("parallelism", spec.parallelism),
        ("completions", spec.completions),
        ("activeDeadlineSeconds", spec.active_deadline_seconds),
        ("backoffLimit", spec.backoff_limit),
        ("backoffLimitPerIndex", spec.backoff_limit_per_index),
        ("maxFailedIndexes", spec.max_failed_indexes),
    ):
        wm.nonnegative(value, f"spec.{key}")
    if spec.parallelism is not None:
        wm.bounded_pods(spec.parallelism, "spec.parallelism")
    if spec.completions is None and spec.parallelism is None:
        return 1, 1
    return spec.completions, 1 if spec.parallelism is None else spec.parallelism


def _job_mode(spec: wm.JobSpec, name: str, completions: int | None, parallelism: int) -> str:
    mode = spec.completion_mode or "NonIndexed"
    if mode not in ("NonIndexed", "Indexed"):
        raise fail(f"Unsupported value: {mode!r}", "spec.completionMode", '"NonIndexed", "Indexed"')
    if mode == "Indexed":
        if spec.completions is None:
            raise fail("Required value: when completion mode is Indexed", "spec.completions")
        if parallelism > wm.MAX_INDEXED_PARALLELISM:
            raise fail(
                f"{parallelism}: must be less than or equal to {wm.MAX_INDEXED_PARALLELISM} "
                "when completion mode is Indexed",
                "spec.parallelism",
            )
        if completions and dns_label_error(f"{name}-{completions - 1}"):
            raise fail(
                f"{name!r}: will not able to create pod with invalid DNS label: "
                f"{name}-{completions - 1}",
                "metadata.name",
            )
    else:
        for key, value in (
            ("backoffLimitPerIndex", spec.backoff_limit_per_index),
            ("maxFailedIndexes", spec.max_failed_indexes),
        ):
            if value is not None:
                raise fail(f"{value}: requires indexed completion mode", f"spec.{key}")
    return mode


def _job_restart_policy(spec: wm.JobSpec, template: wo.PodTemplate) -> None:
    field = "spec.template.spec.restartPolicy"
    if template.restart_policy is wo.RestartPolicy.ALWAYS:
        # SetDefaults_PodSpec defaults an unset restartPolicy to Always, which a Job refuses.
        raise fail('Required value: valid values: "OnFailure", "Never"', field)
    if (
        spec.pod_failure_policy is not None
        and template.restart_policy is not wo.RestartPolicy.NEVER
    ):
        raise fail(
            f'{template.restart_policy.value!r}: only "Never" is supported when '
            "podFailurePolicy is specified",
            field,
        )


def _job_selector(spec: wm.JobSpec, labels: dict[str, str]) -> None:
    if not spec.manual_selector:
        if spec.selector is not None and not spec.selector.is_empty():
            raise fail(
                "`selector` not auto-generated",
                "spec.selector",
                "no selector (the API server generates one), or manualSelector: true",
            )
        return
    if spec.selector is None:
        raise fail("Required value", "spec.selector", "a selector when manualSelector is true")
    check_selector(spec.selector, "spec.selector")
    if not spec.selector.to_selector().matches(labels):
        raise fail(
            f"Invalid value: {labels!r}: `selector` does not match template `labels`",
            "spec.template.metadata.labels",
        )


def _job(doc: Job, warnings: Warnings) -> wo.JobSpec:
    # The job controller labels pods with the Job's name, so it must be a valid label value too.
    name, namespace = _object_meta(doc.metadata, max_name=63)
    spec = doc.spec or wm.JobSpec()
    completions, parallelism = _job_counts(spec)
    mode = _job_mode(spec, name, completions, parallelism)
    template = translate_template(spec.template, "spec.template", warnings)
    _job_restart_policy(spec, template)
    _job_selector(spec, template.labels)
    if spec.suspend:
        warnings.add("spec.suspend", "a suspended Job is not modelled; the twin starts it")
    backoff = spec.backoff_limit
    if backoff is None:  # SetDefaults_Job; newer releases use MaxInt32 with a per-index limit
        backoff = INT32_MAX if spec.backoff_limit_per_index is not None else 6
    deadline = spec.active_deadline_seconds
    return wo.JobSpec(
        name=name,
        namespace=namespace,
        # The job strategy's generateSelector labels the pods with the Job's name.
        template=replace(template, labels={**template.labels, **dict.fromkeys(_JOB_LABELS, name)}),
        completions=completions,
        parallelism=parallelism,
        backoff_limit=backoff,
        active_deadline_s=None if deadline is None else float(deadline),
        completion_mode="Indexed" if mode == "Indexed" else "NonIndexed",
        labels=_labels(doc.metadata) or _template_meta_labels(spec.template),
    )


def _labels(meta: ObjectMeta | None) -> dict[str, str]:
    return dict(meta.labels or {}) if meta is not None else {}


def _template_meta_labels(template: PodTemplateSpec | None) -> dict[str, str]:
    """SetDefaults_Job: a Job without labels takes its template's (as written)."""
    return _labels(template.metadata) if template is not None else {}


def _replicated_template(
    template: PodTemplateSpec | None, selector: LabelSelector | None, warnings: Warnings
) -> wo.PodTemplate:
    """ValidatePodTemplateSpecForReplicaSet: selector match, restartPolicy Always, no deadline."""
    result = translate_template(template, "spec.template", warnings)
    wm.check_controller_selector(selector, result.labels, "spec")
    if result.restart_policy is not wo.RestartPolicy.ALWAYS:
        raise fail(
            f"Unsupported value: {result.restart_policy.value!r}",
            "spec.template.spec.restartPolicy",
            '"Always"',
        )
    if template is not None and template.spec and template.spec.active_deadline_seconds:
        raise fail(
            "activeDeadlineSeconds in ReplicaSet is not Supported",
            "spec.template.spec.activeDeadlineSeconds",
        )
    return result


def _deployment(doc: Deployment, warnings: Warnings) -> wo.DeploymentSpec:
    name, namespace = _object_meta(doc.metadata)
    spec = doc.spec or wm.DeploymentSpec()
    replicas = 1 if spec.replicas is None else spec.replicas
    wm.nonnegative(replicas, "spec.replicas")
    wm.bounded_pods(replicas, "spec.replicas")
    template = _replicated_template(spec.template, spec.selector, warnings)
    surge, unavailable = wm.strategy_params(spec)
    min_ready = spec.min_ready_seconds or 0
    wm.nonnegative(min_ready, "spec.minReadySeconds")
    wm.nonnegative(spec.revision_history_limit, "spec.revisionHistoryLimit")
    deadline = spec.progress_deadline_seconds
    if deadline is not None:
        wm.nonnegative(deadline, "spec.progressDeadlineSeconds")
        if deadline <= min_ready:
            raise fail(
                f"{deadline}: must be greater than minReadySeconds", "spec.progressDeadlineSeconds"
            )
    if spec.paused:
        warnings.add("spec.paused", "a paused Deployment is not modelled; the twin rolls it out")
    return wo.DeploymentSpec(
        name=name,
        namespace=namespace,
        template=template,
        replicas=replicas,
        labels=_labels(doc.metadata),
        selector=spec.selector.to_selector() if spec.selector is not None else None,
        max_surge=surge,
        max_unavailable=unavailable,
    )


def _replica_set(doc: ReplicaSet, warnings: Warnings) -> wo.ReplicaSetSpec:
    name, namespace = _object_meta(doc.metadata)
    spec = doc.spec or wm.ReplicaSetSpec()
    replicas = 1 if spec.replicas is None else spec.replicas
    wm.nonnegative(replicas, "spec.replicas")
    wm.bounded_pods(replicas, "spec.replicas")
    wm.nonnegative(spec.min_ready_seconds, "spec.minReadySeconds")
    template = _replicated_template(spec.template, spec.selector, warnings)
    return wo.ReplicaSetSpec(
        name=name,
        namespace=namespace,
        template=template,
        replicas=replicas,
        labels=_labels(doc.metadata),
        selector=spec.selector.to_selector() if spec.selector is not None else None,
    )


def _pod_group(doc: PodGroup, warnings: Warnings) -> wo.PodGroupSpec:
    name, namespace = _object_meta(doc.metadata)
    if doc.api_version != POD_GROUP_VERSIONS[0]:
        warnings.add(
            "apiVersion",
            f"{doc.api_version} is the group of scheduler-plugins before v0.24; read as "
            f"{POD_GROUP_VERSIONS[0]}",
        )
    spec = doc.spec or wm.PodGroupSpec()
    min_member = spec.min_member or 0
    wm.nonnegative(min_member, "spec.minMember")
    if min_member == 0:
        warnings.add("spec.minMember", "minMember 0 never holds pods back (no gang scheduling)")
    timeout = spec.schedule_timeout_seconds
    wm.nonnegative(timeout, "spec.scheduleTimeoutSeconds")
    return wo.PodGroupSpec(
        name=name,
        namespace=namespace,
        min_member=min_member,
        min_resources=parse_resource_list(spec.min_resources, "spec.minResources"),
        schedule_timeout_s=None if timeout is None else float(timeout),
    )


def _kind_of(doc: object) -> tuple[str, str]:
    if not isinstance(doc, dict):
        raise fail(f"got {doc!r:.60}", "", f"a Kubernetes object: {SUPPORTED}")
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    for key, value in (("apiVersion", api_version), ("kind", kind)):
        if value is None:
            raise fail(f"required key {key!r} is missing", "", f"{key} of {SUPPORTED}")
        if not isinstance(value, str):
            raise fail(f"got {value!r}", key, "a string")
    assert isinstance(api_version, str) and isinstance(kind, str)
    if kind not in KINDS:
        raise fail(f"kind {kind!r} is not supported", "kind", SUPPORTED)
    if api_version not in KINDS[kind]:
        raise fail(
            f"apiVersion {api_version!r} does not serve {kind}",
            "apiVersion",
            " or ".join(KINDS[kind]),
        )
    return api_version, kind


def parse_manifest(doc: object) -> ParsedManifest:
    """One manifest document -> twin spec value; InputError fields are relative to the document."""
    _, kind = _kind_of(doc)
    warnings = Warnings()
    obj: wo.WorkloadObject
    if kind == "Pod":
        obj = _pod(validate_model(Pod, doc), warnings)
    elif kind == "Job":
        obj = _job(validate_model(Job, doc), warnings)
    elif kind == "Deployment":
        obj = _deployment(validate_model(Deployment, doc), warnings)
    elif kind == "ReplicaSet":
        obj = _replica_set(validate_model(ReplicaSet, doc), warnings)
    else:
        obj = _pod_group(validate_model(PodGroup, doc), warnings)
    return ParsedManifest(obj=obj, kind=kind, warnings=tuple(warnings.items))


def load_manifest(doc: object, *, source: str, line_of: LineOf, prefix: str = "") -> ParsedManifest:
    """:func:`parse_manifest` with errors placed at ``source:line`` under field ``prefix``."""
    try:
        return parse_manifest(doc)
    except InputError as err:
        raise relocate(err, source, line_of, prefix) from None


def render_warnings(
    parsed: ParsedManifest, *, source: str, line_of: LineOf, prefix: str = ""
) -> tuple[str, ...]:
    """Each warning as ``file:line: field: text``."""
    out = []
    for field, text in parsed.warnings:
        path = join_path(prefix, field)
        line = line_of(path)
        where = f"{source}:{line}" if line is not None else source
        out.append(f"{where}: {path}: {text}" if path else f"{where}: {text}")
    return tuple(out)
