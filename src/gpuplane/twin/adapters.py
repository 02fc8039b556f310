"""Thin adapters that make the remaining parts of a run ``TwinComponent``s.

- ``NodeAgentComponent``: the GPU Operator's node agent (``NodeAgent``) receives the cluster and
  the kubelet when it starts, not when it is made, so a test can hand one in ready-made;
- ``StaticNodes``: without a node agent every node is simply ready with its devices;
- ``PolicyUpdates``: the scenario's ClusterPolicy changes, handed to the node agent at their
  times;
- ``InvariantChecker``: the conservation checks after every event (``--check-invariants``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from gpuplane.core.kernel import EventHandle, Priority, TwinError
from gpuplane.operator.cluster_policy import ClusterPolicy
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.invariants import violations
from gpuplane.twin.component import Component, SummarySection
from gpuplane.twin.kubelet.simulator import KubeletSim


class NodeAgent(Protocol):
    """Brings a node's GPU stack up (the GPU Operator) and reacts to faults and upgrades."""

    def start(self, cluster: Cluster, kubelet: KubeletSim, until_s: float) -> None: ...

    def update_policy(self, policy: ClusterPolicy) -> None: ...

    def summary(self) -> SummarySection: ...


class NodeAgentComponent(Component):
    def __init__(self, agent: NodeAgent, cluster: Cluster, kubelet: KubeletSim) -> None:
        self.agent = agent
        self.c = cluster
        self.kubelet = kubelet

    def start(self, until_s: float) -> None:
        self.agent.start(self.c, self.kubelet, until_s)

    def summary(self) -> SummarySection:
        return self.agent.summary()


class StaticNodes(Component):
    def __init__(self, cluster: Cluster) -> None:
        self.c = cluster

    def start(self, until_s: float) -> None:
        for node in self.c.store.nodes.values():
            self.c.store.refresh_node(node)


class PolicyUpdates(Component):
    def __init__(
        self,
        cluster: Cluster,
        agent: NodeAgent,
        updates: tuple[tuple[float, ClusterPolicy], ...],
    ) -> None:
        self.c = cluster
        self.agent = agent
        self.updates = updates

    def start(self, until_s: float) -> None:
        for t_s, policy in self.updates:
            self.c.loop.schedule(
                t_s, self._updater(policy), priority=Priority.OPERATOR, label="ClusterPolicy update"
            )

    def _updater(self, policy: ClusterPolicy) -> Callable[[], None]:
        return lambda: self.agent.update_policy(policy)


class InvariantChecker(Component):
    def __init__(self, cluster: Cluster) -> None:
        self.c = cluster

    def after_event(self, handle: EventHandle) -> None:
        found = violations(self.c.store, self.c.counters.get("pods_created", 0))
        if found:
            raise TwinError(
                f"invariant broken after {handle.label!r} at t={handle.t_s:.3f}s: "
                + "; ".join(found[:5])
            )
