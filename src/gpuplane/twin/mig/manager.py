"""NVIDIA's MIG manager in the twin: apply the layout a node's ``nvidia.com/mig.config`` names.

The GPU Operator's MIG manager watches the label; on a change it sets
``nvidia.com/mig.config.state=pending``, stops the GPU clients on the node, applies the named
mig-parted config, restarts the clients and sets the state to ``success``. The twin models a
label change at a scenario time (``mig_config_changes``) for every node of a pool:

- pending: the node is cordoned and every pod holding a MIG device is evicted (the GPUs cannot
  be repartitioned under running processes; their controllers recreate them elsewhere or later),
  and the device plugin stops advertising MIG devices;
- ``reconfigure_s`` later the new layout (NVIDIA's named config for the GPU model, placed as
  ``mig-parted apply`` places it) is advertised, the node is uncordoned, the state is success and
  an event ``MigConfigApplied`` names the config.
"""

from __future__ import annotations

from gpuplane.core.kernel import Priority
from gpuplane.slicing.mig.node_devices import (
    MIG_CONFIG_LABEL,
    MIG_STATE_LABEL,
    layouts_from_config,
    mig_slots,
)
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.objects import Node
from gpuplane.twin.component import Component
from gpuplane.twin.kubelet.simulator import KubeletSim
from gpuplane.twin.scenario.mig import MigConfigChange


class MigManager(Component):
    def __init__(
        self, cluster: Cluster, kubelet: KubeletSim, changes: tuple[MigConfigChange, ...] = ()
    ) -> None:
        self.c = cluster
        self.kubelet = kubelet
        self.changes = changes

    def start(self, until_s: float) -> None:
        """Schedule the scenario's label changes."""
        for change in self.changes:
            self.c.loop.schedule(
                change.t_s,
                lambda ch=change: self._label(ch),  # type: ignore[misc]
                priority=Priority.NODE,
                label=f"mig.config {change.pool}={change.config}",
            )

    def _label(self, change: MigConfigChange) -> None:
        for name in self.c.store.node_order:
            node = self.c.store.nodes[name]
            if node.pool == change.pool and node.mig_layouts is not None:
                self._start(node, change)

    def _start(self, node: Node, change: MigConfigChange) -> None:
        node.labels[MIG_CONFIG_LABEL] = change.config
        node.labels[MIG_STATE_LABEL] = "pending"
        was_cordoned = node.unschedulable
        node.unschedulable = True
        for pod in self.c.store.pods_on(node):
            if pod.ext_device_ids or pod.gpu_ids:
                self.kubelet.delete(
                    pod,
                    "Evicted",
                    f"MIG manager applies mig.config {change.config!r} on {node.name}",
                    warning=True,
                )
        self.c.store.reshape_ext_devices(node, {name: [] for name in node.ext_slots})
        self.c.node_refresh(node, static=True)
        self.c.count("mig_config_applies")
        self.c.loop.after(
            change.reconfigure_s,
            lambda: self._finish(node, change, was_cordoned),
            priority=Priority.NODE,
            label=f"mig.config done {node.name}",
        )

    def _finish(self, node: Node, change: MigConfigChange, was_cordoned: bool) -> None:
        layouts = layouts_from_config(node.topology, change.config)
        node.mig_layouts = list(layouts)
        _, ext = mig_slots(node.topology, layouts, node.mig_strategy or "mixed")
        self.c.store.reshape_ext_devices(node, ext)
        node.labels[MIG_STATE_LABEL] = "success"
        node.unschedulable = was_cordoned
        self.c.emit("Node", node.name, "MigConfigApplied", f"mig.config {change.config!r} applied")
        self.c.node_refresh(node, static=True)
