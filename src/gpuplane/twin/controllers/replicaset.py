"""ReplicaSet controller: keep ``replicas`` active pods (kube-controller-manager replica_set.go).

Active = not terminal and not being deleted (controller.FilterActivePods): a Failed pod is not
active, so the controller creates a replacement, which is how an admission failure such as
TopologyAffinityError is "reconciled by a higher-level controller". Failed pods stay until pod
garbage collection; the twin keeps them and counts the replacements.

Scale-down deletes pods in the order of controller.ActivePods ranking: unassigned before
assigned, Pending before Running, not ready before ready, more restarts first, newer first.
"""

from __future__ import annotations

from gpuplane.api.owner import OwnerRef
from gpuplane.api.pod_phase import PodPhase
from gpuplane.api.selectors import LabelSelector, from_match_fields
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.objects import Pod, ReplicaSetState
from gpuplane.twin.component import Component
from gpuplane.twin.controllers.runtime import sample_pod_fate
from gpuplane.twin.kubelet.simulator import KubeletSim
from gpuplane.twin.scenario.spec import Workload

KIND = "ReplicaSet"
# apps/v1 DefaultDeploymentUniqueLabelKey: the Deployment controller adds it to its ReplicaSets'
# selector and pods.
POD_TEMPLATE_HASH = "pod-template-hash"


def controller_selector(
    selector: LabelSelector | None, template_labels: dict[str, str]
) -> LabelSelector:
    """A controller's spec.selector; the template's labels when the spec gave none."""
    return selector if selector is not None else from_match_fields(template_labels, None)


class ReplicaSetController(Component):
    def __init__(
        self, cluster: Cluster, kubelet: KubeletSim, workloads: dict[str, Workload]
    ) -> None:
        self.c = cluster
        self.kubelet = kubelet
        self.workloads = workloads
        cluster.register_controller(KIND, self.sync)

    def add(self, rs: ReplicaSetState) -> None:
        self.c.store.replica_sets[f"{rs.namespace}/{rs.name}"] = rs
        self.c.request_sync(KIND, f"{rs.namespace}/{rs.name}")

    def sync(self, key: str) -> None:
        rs = self.c.store.replica_sets.get(key)
        if rs is None:
            return
        pods = [self.c.store.pods[u] for u in rs.pods]
        active = [p for p in pods if p.is_active]
        diff = rs.replicas - len(active)
        if diff > 0:
            # Pods lost to failure or deletion by others (not this controller's scale-down)
            # that have not been replaced yet.
            lost = sum(
                1
                for p in pods
                if (p.phase is PodPhase.FAILED or p.is_deleted) and p.uid not in rs.scaled_down
            )
            replacing = min(diff, max(lost - rs.replacements, 0))
            for _ in range(diff):
                self._create(rs)
            if replacing:
                rs.replacements += replacing
                self.c.count("controller_replacements", replacing)
        elif diff < 0:
            for pod in sorted(active, key=_deletion_rank)[:-diff]:
                rs.scaled_down.add(pod.uid)
                self.kubelet.delete(pod, "Killing", f"Stopping container main ({KIND} scale-down)")
                self.c.emit(
                    KIND,
                    rs.name,
                    "SuccessfulDelete",
                    f"Deleted pod: {pod.name}",
                    namespace=rs.namespace,
                )

    def _create(self, rs: ReplicaSetState) -> Pod:
        workload = self.workloads.get(rs.workload)
        run_s, fails = sample_pod_fate(workload, self.c.rng.stream("pod-runtime"))
        pod = self.c.create_pod(
            rs.template,
            namespace=rs.namespace,
            generate_name=f"{rs.name}-",
            owner=OwnerRef(KIND, rs.name, rs.namespace),
            workload=rs.workload,
            run_s=run_s,
            will_fail=fails,
            extra_labels={POD_TEMPLATE_HASH: rs.pod_hash} if rs.pod_hash else None,
        )
        rs.pods.append(pod.uid)
        return pod


def _deletion_rank(pod: Pod) -> tuple[int, int, int, int, float]:
    return (
        0 if pod.node_name is None else 1,
        0 if pod.phase is PodPhase.PENDING else 1,
        0 if not pod.conditions.get("Ready") else 1,
        -pod.restart_count,
        -pod.created_s,
    )
