"""Deployment controller: one ReplicaSet named ``<deployment>-<pod-template-hash>``.

The twin does not change a Deployment's template during a run, so there is no rollout: the
Deployment owns a single ReplicaSet with its replica count (deployment_controller.go without
rolling updates). The hash is a stable 10-character string derived from the name, standing in
for Kubernetes' hash of the pod template.
"""

from __future__ import annotations

import zlib

from gpuplane.api.owner import OwnerRef
from gpuplane.api.selectors import with_match_labels
from gpuplane.fit.workload_objects import DeploymentSpec, ReplicaSetSpec
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.objects import DeploymentState, ReplicaSetState
from gpuplane.twin.component import Component
from gpuplane.twin.controllers.replicaset import (
    POD_TEMPLATE_HASH,
    ReplicaSetController,
    controller_selector,
)

_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(name: str) -> str:
    value = zlib.crc32(name.encode()) * 2654435761 % (1 << 52)
    out = ""
    for _ in range(10):
        value, digit = divmod(value, len(_ALPHABET))
        out += _ALPHABET[digit]
    return out


class DeploymentController(Component):
    def __init__(self, cluster: Cluster, replica_sets: ReplicaSetController) -> None:
        self.c = cluster
        self.replica_sets = replica_sets

    def create(self, spec: DeploymentSpec, name: str, workload: str) -> None:
        pod_hash = template_hash(f"{spec.namespace}/{name}")
        rs_name = f"{name}-{pod_hash}"
        self.c.store.deployments[f"{spec.namespace}/{name}"] = DeploymentState(
            name, spec.namespace, spec.replicas, rs_name, workload
        )
        self.c.emit(
            "Deployment",
            name,
            "ScalingReplicaSet",
            f"Scaled up replica set {rs_name} to {spec.replicas}",
            namespace=spec.namespace,
        )
        self.replica_sets.add(
            ReplicaSetState(
                name=rs_name,
                namespace=spec.namespace,
                template=spec.template,
                replicas=spec.replicas,
                workload=workload,
                owner=OwnerRef("Deployment", name, spec.namespace),
                pod_hash=pod_hash,
                # The Deployment controller adds the hash to its ReplicaSet's selector
                # (CloneSelectorAndAddLabel).
                selector=with_match_labels(
                    {POD_TEMPLATE_HASH: pod_hash},
                    controller_selector(spec.selector, spec.template.labels),
                ),
            )
        )

    def create_replica_set(self, spec: ReplicaSetSpec, name: str, workload: str) -> None:
        self.replica_sets.add(
            ReplicaSetState(
                name=name,
                namespace=spec.namespace,
                template=spec.template,
                replicas=spec.replicas,
                workload=workload,
                selector=controller_selector(spec.selector, spec.template.labels),
            )
        )

    def scale(self, key: str, replicas: int, reason: str = "") -> None:
        """Write ``spec.replicas`` (what ``kubectl scale`` and the HPA do) and let the
        ReplicaSet converge; the ScalingReplicaSet event says which way it went."""
        state = self.c.store.deployments.get(key)
        if state is None:
            return
        old, state.replicas = state.replicas, max(replicas, 0)
        rs = self.c.store.replica_sets.get(f"{state.namespace}/{state.replica_set}")
        if rs is None:
            return
        rs.replicas = state.replicas
        way = "up" if state.replicas > old else "down"
        self.c.emit(
            "Deployment",
            state.name,
            "ScalingReplicaSet",
            f"Scaled {way} replica set {rs.name} from {old} to {state.replicas}"
            + (f" ({reason})" if reason else ""),
            namespace=state.namespace,
        )
        self.c.request_sync("ReplicaSet", f"{rs.namespace}/{rs.name}")
