"""The twin's :class:`~gpuplane.slicing.mig.controller_loop.MigWriter`: the live controller's
writes (``gpuplane.live.migctl.apply``), done on the twin's objects.

- the configs go into the MIG manager's mig-parted file (live: the ConfigMap);
- an eviction deletes the pod through the kubelet, as an Eviction would (the twin has no
  PodDisruptionBudgets, so none is refused);
- the label is handed to the twin's MIG manager (``MigManager.relabel``: the label watch), which
  drains and reconfigures the node as NVIDIA's does; the controller's Normal event
  ``GpuplaneMigRepartition`` (the live event's reason and message) is recorded on the Node, and
  ``mig_reconfigurations`` counts the relabels (the summary's "MIG repartitions").
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuplane.slicing.mig.controller_types import NodeChange
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.kubelet.simulator import KubeletSim
from gpuplane.twin.mig.manager import MigManager

REASON = "GpuplaneMigRepartition"  # the live controller's (live.migctl.apply.REASON)
BLOCKED_REASON = "GpuplaneMigRepartitionBlocked"


class TwinMigWriter:
    def __init__(self, cluster: Cluster, manager: MigManager, kubelet: KubeletSim) -> None:
        self.c = cluster
        self.manager = manager
        self.kubelet = kubelet

    def write_configs(self, changes: Sequence[NodeChange]) -> str:
        self.manager.add_configs([(c.config, c.entries) for c in changes])
        return "recorded"

    def evict(self, change: NodeChange, pod: str) -> bool:
        for uid in sorted(self.c.store.active):
            found = self.c.store.pods[uid]
            if found.key == pod and found.node_name == change.node:
                message = f"evicted to relabel {change.node} nvidia.com/mig.config={change.config}"
                self.kubelet.delete(found, "Evicted", message, warning=True)
        return True

    def refused(self, change: NodeChange, pod: str, message: str) -> None:
        self.c.emit("Node", change.node, BLOCKED_REASON, message, warning=True)

    def relabel(self, change: NodeChange) -> None:
        node = self.c.store.nodes[change.node]
        self.c.count("mig_reconfigurations")
        self.c.emit("Node", node.name, REASON, change.message)
        self.manager.relabel(node, change.config)
