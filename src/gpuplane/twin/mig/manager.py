"""NVIDIA's MIG manager in the twin: apply the layout a node's ``nvidia.com/mig.config`` names.

The GPU Operator's MIG manager watches the label; on a change it sets
``nvidia.com/mig.config.state=pending``, stops the GPU clients on the node, applies the named
mig-parted config, restarts the clients and sets the state to ``success``. A label change comes
either at a scenario time (``mig_config_changes``, for every node of a pool) or from gpuplane's
repartitioning controller (``relabel``, the twin's stand-in for the label watch), whose configs
are content-named ones it first adds to the manager's mig-parted file (``add_configs``: the
ConfigMap ``migManager.config.name`` names, live); a name not in that file is NVIDIA's default.

- pending: the node is cordoned and every pod holding a MIG device is evicted (the GPUs cannot
  be repartitioned under running processes; their controllers recreate them elsewhere or later),
  and the device plugin stops advertising MIG devices;
- ``reconfigure_s`` later the new layout (NVIDIA's named config for the GPU model, placed as
  ``mig-parted apply`` places it) is advertised, the node is uncordoned, the state is success and
  an event ``MigConfigApplied`` names the config.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpuplane.core.kernel import Priority
from gpuplane.slicing.mig.layout import Layout
from gpuplane.slicing.mig.node_devices import (
    MIG_CONFIG_LABEL,
    MIG_STATE_LABEL,
    layouts_from_config,
    mig_gpu_of,
    mig_slots,
)
from gpuplane.slicing.mig.parted_config import PartedConfig, PartedEntry
from gpuplane.slicing.mig.parted_naming import layouts_of, merged_config
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.objects import Node
from gpuplane.twin.component import Component
from gpuplane.twin.kubelet.simulator import KubeletSim
from gpuplane.twin.scenario.mig import MigConfigChange

DEFAULT_RECONFIGURE_S = 60.0


class MigManager(Component):
    def __init__(
        self,
        cluster: Cluster,
        kubelet: KubeletSim,
        changes: tuple[MigConfigChange, ...] = (),
        reconfigure_s: Mapping[str, float] | None = None,
    ) -> None:
        self.c = cluster
        self.kubelet = kubelet
        self.changes = changes
        # How long applying a config takes on a pool's nodes (the pool's mig.reconfigure_s).
        self.reconfigure_s = dict(reconfigure_s or {})
        # The mig-parted file the manager reads besides NVIDIA's defaults (the ConfigMap).
        self.parted = PartedConfig((), source="<the twin's mig-parted ConfigMap>")

    def add_configs(self, configs: Sequence[tuple[str, tuple[PartedEntry, ...]]]) -> None:
        """Add (or replace) named configs in the manager's mig-parted file."""
        self.parted = merged_config(self.parted, configs)

    def relabel(self, node: Node, config: str) -> None:
        """The node's ``nvidia.com/mig.config`` was set to ``config``: apply it."""
        change = MigConfigChange(
            self.c.now, node.pool, config, self.reconfigure_s.get(node.pool, DEFAULT_RECONFIGURE_S)
        )
        self._start(node, change)

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

    def _layouts(self, node: Node, config: str) -> tuple[Layout, ...]:
        if config in self.parted.names():
            layouts = layouts_of(
                self.parted, config, mig_gpu_of(node.topology), len(node.topology.gpus)
            )
            if layouts is not None:
                return layouts
        return layouts_from_config(node.topology, config)

    def _finish(self, node: Node, change: MigConfigChange, was_cordoned: bool) -> None:
        layouts = self._layouts(node, change.config)
        node.mig_layouts = list(layouts)
        _, ext = mig_slots(node.topology, layouts, node.mig_strategy or "mixed")
        self.c.store.reshape_ext_devices(node, ext)
        node.labels[MIG_STATE_LABEL] = "success"
        node.unschedulable = was_cordoned
        self.c.emit("Node", node.name, "MigConfigApplied", f"mig.config {change.config!r} applied")
        self.c.node_refresh(node, static=True)
