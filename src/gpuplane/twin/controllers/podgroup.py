"""PodGroup status (scheduler-plugins coscheduling controller), derived from member pods.

Phases: Pending (fewer than minMember pods exist) -> Scheduling (enough pods, not all placed)
-> Scheduled (minMember bound) -> Running (minMember running) -> Finished (minMember
succeeded) | Failed (a member failed after the group was running).
"""

from __future__ import annotations

from gpuplane.api.pod_phase import PodPhase
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.objects import Pod, PodGroupState
from gpuplane.twin.component import Component

KIND = "PodGroup"


class PodGroupController(Component):
    def __init__(self, cluster: Cluster) -> None:
        self.c = cluster
        cluster.on_pod_change.append(self._on_pod)
        cluster.register_controller(KIND, self.sync)

    def add(self, group: PodGroupState) -> None:
        self.c.store.pod_groups[f"{group.namespace}/{group.name}"] = group

    def _on_pod(self, pod: Pod) -> None:
        if pod.pod_group is not None:
            key = f"{pod.namespace}/{pod.pod_group}"
            if key in self.c.store.pod_groups:
                self.c.request_sync(KIND, key)

    def sync(self, key: str) -> None:
        group = self.c.store.pod_groups[key]
        members = [
            p
            for p in self.c.store.pods.values()
            if p.pod_group == group.name and p.namespace == group.namespace
        ]
        live = [p for p in members if not p.is_deleted]
        bound = sum(1 for p in live if p.node_name is not None and p.is_active)
        running = sum(1 for p in live if p.phase is PodPhase.RUNNING)
        succeeded = sum(1 for p in members if p.phase is PodPhase.SUCCEEDED)
        failed = sum(1 for p in members if p.phase is PodPhase.FAILED)
        phase = group.phase
        if succeeded >= group.min_member:
            phase = "Finished"
        elif failed and group.phase in ("Running", "Scheduled"):
            phase = "Failed"
        elif running >= group.min_member:
            phase = "Running"
        elif bound >= group.min_member:
            phase = "Scheduled"
        elif len(live) >= group.min_member:
            phase = "Scheduling"
        if phase != group.phase:
            if phase == "Scheduled" and group.scheduled_s is None:
                group.scheduled_s = self.c.now
            self.c.emit(
                KIND,
                group.name,
                phase,
                f"PodGroup {group.name} is {phase}",
                namespace=group.namespace,
                warning=phase == "Failed",
            )
            group.phase = phase
