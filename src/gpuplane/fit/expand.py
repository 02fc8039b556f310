"""Workload objects (the twin's specs of Pods, Deployments, ReplicaSets, StatefulSets, Jobs and
PodGroups) -> the pods ``fit`` asks about.

A controller's pods are its template times its replicas (a Job: ``parallelism``, at most the
completions left), named ``<name>-<i>`` (StatefulSet ordinals; for the others a stand-in for the
random suffix). Priority comes from the pod's ``priorityClassName`` in the cluster's
PriorityClasses, as the Priority admission plugin sets it; a name the cluster lacks is refused as
the API server refuses it. A pod carrying the PodGroup label joins that gang; the PodGroup may be
in the workload or already in the cluster.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpuplane.api.qos import pod_qos_class
from gpuplane.api.selectors import LabelSelector, from_match_fields
from gpuplane.core.errors import InputError, Location
from gpuplane.fit import workload_objects as wo_
from gpuplane.fit.dra_claims import claims_for_pod
from gpuplane.fit.model import FitCluster
from gpuplane.fit.resources import pod_requests
from gpuplane.fit.selecting import default_selector
from gpuplane.fit.workload import FitWorkload, WorkloadPod
from gpuplane.fit.workload_objects import POD_GROUP_LABEL
from gpuplane.scheduler.framework.types import (
    PREEMPT_LOWER_PRIORITY,
    ContainerInfo,
    PodGroupInfo,
    PodInfo,
)
from gpuplane.slicing.dra.claims import ResourceClaim, ResourceClaimTemplate
from gpuplane.slicing.dra.pod_claims import PodClaims


@dataclass(frozen=True, slots=True)
class WorkloadObject:
    """One object of the workload file, with where it was written."""

    obj: wo_.WorkloadObject
    kind: str  # as written: Pod, Deployment, ReplicaSet, StatefulSet, Job, PodGroup
    where: str  # "file:line" of the document
    preemption_policy: str = PREEMPT_LOWER_PRIORITY


def _priority(t: wo_.PodTemplate, cluster: FitCluster, where: str) -> int:
    name = t.priority_class_name
    if name is None:
        return t.priority if t.priority else cluster.default_priority
    if name in cluster.priority_classes:
        return cluster.priority_classes[name]
    if name in ("system-node-critical", "system-cluster-critical"):
        return 2000001000 if name == "system-node-critical" else 2000000000
    known = ", ".join(sorted(cluster.priority_classes))
    raise InputError(
        f"no PriorityClass with name {name} was found",
        expected=f"one of the cluster's PriorityClasses ({known or 'none'})",
        location=Location(where, field="spec.priorityClassName"),
    )


def pod_info(
    t: wo_.PodTemplate, namespace: str, name: str, cluster: FitCluster, wo: WorkloadObject
) -> PodInfo:
    containers = (
        *(ContainerInfo(c.name, dict(c.requests), True, c.image) for c in t.init_containers),
        *(ContainerInfo(c.name, dict(c.requests), False, c.image) for c in t.containers),
    )
    pairs = [(c.requests, c.limits) for c in (*t.containers, *t.init_containers)]
    return PodInfo(
        uid=f"fit:{namespace}/{name}",
        namespace=namespace,
        name=name,
        requests=pod_requests(t),
        priority=_priority(t, cluster, wo.where),
        created_s=cluster.now_s,
        node_selector=t.node_selector,
        tolerations=t.tolerations,
        affinity=t.affinity,
        pod_group=t.labels.get(POD_GROUP_LABEL),
        scheduler_name=t.scheduler_name,
        preemption_policy=wo.preemption_policy,
        qos=pod_qos_class(pairs),
        containers=containers,
        labels=dict(t.labels),
        topology_spread_constraints=t.topology_spread_constraints,
        default_spread_selector=default_selector(
            cluster.selecting, namespace, t.labels, None, _controller_selector(wo)
        ),
    )


def _controller_selector(wo: WorkloadObject) -> LabelSelector | None:
    """The selector of the controller that would own the pods (DefaultSelector's controller
    part): a Deployment's ReplicaSet selects by the Deployment's selector (plus its
    pod-template-hash, which every pod of it carries, so it selects the same pods); a ReplicaSet
    or StatefulSet by its own; a Job or a bare Pod by none."""
    o = wo.obj
    if isinstance(o, wo_.DeploymentSpec | wo_.ReplicaSetSpec):
        if o.selector is not None:
            return o.selector
        return from_match_fields(o.template.labels, None)
    return None


def _replicas(wo: WorkloadObject) -> tuple[str, str, wo_.PodTemplate, int] | None:
    o = wo.obj
    if isinstance(o, wo_.PodSpecObject):
        return o.namespace, o.name, o.template, 1
    if isinstance(o, wo_.DeploymentSpec | wo_.ReplicaSetSpec):
        return o.namespace, o.name, o.template, o.replicas
    if isinstance(o, wo_.JobSpec):
        count = o.parallelism if o.completions is None else min(o.parallelism, o.completions)
        return o.namespace, o.name, o.template, count
    return None


def expand(
    objects: Sequence[WorkloadObject],
    cluster: FitCluster,
    templates: Sequence[ResourceClaimTemplate] = (),
) -> FitWorkload:
    pods: list[WorkloadPod] = []
    groups: dict[str, PodGroupInfo] = {}
    known = {**cluster.claim_templates, **{t.key: t for t in templates}}
    existing = cluster.dra.claims if cluster.dra is not None else {}
    claims: list[ResourceClaim] = []
    pod_claims: dict[str, PodClaims] = {}
    for wo in objects:
        if isinstance(wo.obj, wo_.PodGroupSpec):
            key = f"{wo.obj.namespace}/{wo.obj.name}"
            groups[key] = PodGroupInfo(
                key, wo.obj.min_member, wo.obj.schedule_timeout_s, cluster.now_s
            )
            continue
        found = _replicas(wo)
        if found is None:
            continue
        namespace, name, template, count = found
        label = f"{wo.kind}/{name}"
        for i in range(count):
            pod_name = name if isinstance(wo.obj, wo_.PodSpecObject) else f"{name}-{i}"
            info = pod_info(template, namespace, pod_name, cluster, wo)
            pods.append(WorkloadPod(info, label, f"{namespace}/{label}"))
            if template.resource_claims:
                entry, made = claims_for_pod(
                    template.resource_claims,
                    namespace=namespace,
                    pod_name=pod_name,
                    pod_uid=info.uid,
                    templates=known,
                    existing=existing,
                    where=wo.where,
                )
                pod_claims[info.uid] = entry
                claims.extend(made)
    return FitWorkload(tuple(pods), _with_members(groups, pods, cluster), tuple(claims), pod_claims)


def _with_members(
    groups: Mapping[str, PodGroupInfo], pods: Sequence[WorkloadPod], cluster: FitCluster
) -> dict[str, PodGroupInfo]:
    """Each gang's member count: the workload's pods plus the cluster's live members."""
    out = {}
    known = {**cluster.pod_groups, **groups}
    for key, group in known.items():
        new = sum(1 for p in pods if p.info.group_key == key)
        if not new and key not in groups:
            continue
        live = cluster.pod_groups.get(key)
        out[key] = PodGroupInfo(
            key,
            group.min_member,
            group.schedule_timeout_s,
            group.created_s,
            num_pods=new + (live.num_pods if live else 0),
            assigned=live.assigned if live else 0,
        )
    return out
