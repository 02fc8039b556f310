"""The driver upgrade controller in the twin: snapshot the nodes, ask
``operator.upgrade.decide_upgrades``, apply the decision, requeue.

Applying follows what the gpu-operator's controller does with the library's decision: set the
``nvidia.com/gpu-driver-upgrade-state`` label, cordon/uncordon, evict the listed pods (their
controllers replace them elsewhere), delete the driver pod so the DaemonSet starts the new
version. The controller reconciles again after ``requeue_after_s`` and whenever something it
waits for happens (a node's GPU stack moves); a zero requeue is taken as 1 s so that one instant
never loops.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuplane.api.pod_phase import PodPhase
from gpuplane.api.pod_phase import PodPhase as UpgradePodPhase
from gpuplane.core.kernel import EventHandle, Priority
from gpuplane.operator.lifecycle_state import GpuNodeState
from gpuplane.operator.upgrade import decide_upgrades
from gpuplane.operator.upgrade_state import (
    NodeUpgradeAction,
    UpgradeNode,
    UpgradePod,
    UpgradeSnapshot,
    UpgradeState,
)
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.objects import Node, Pod
from gpuplane.twin.kubelet.simulator import KubeletSim

if TYPE_CHECKING:
    from gpuplane.twin.operator.node_agent import OperatorNodeAgent

_PAST_VALIDATION = frozenset(
    {
        GpuNodeState.DEVICE_PLUGIN_STARTING,
        GpuNodeState.DEVICE_PLUGIN_FAILED,
        GpuNodeState.DCGM_STARTING,
        GpuNodeState.DCGM_FAILED,
        GpuNodeState.GFD_LABELING,
        GpuNodeState.GFD_FAILED,
        GpuNodeState.READY,
    }
)
_DRIVER_NOT_READY = frozenset(
    {
        GpuNodeState.JOINING,
        GpuNodeState.DRIVER_INSTALLING,
        GpuNodeState.DRIVER_FAILED,
        GpuNodeState.DRIVER_UPGRADING,
        GpuNodeState.NODE_LOST,
    }
)
_PHASE = {
    PodPhase.PENDING: UpgradePodPhase.PENDING,
    PodPhase.RUNNING: UpgradePodPhase.RUNNING,
    PodPhase.SUCCEEDED: UpgradePodPhase.SUCCEEDED,
    PodPhase.FAILED: UpgradePodPhase.FAILED,
}


class UpgradeAgent:
    def __init__(self, cluster: Cluster, kubelet: KubeletSim, agent: OperatorNodeAgent) -> None:
        self.c = cluster
        self.kubelet = kubelet
        self.agent = agent
        self._next: EventHandle | None = None
        self.num_reconciles = 0
        self.max_in_progress = 0
        self.max_unavailable_seen = 0

    def start(self) -> None:
        self._at(0.0)

    def poke(self) -> None:
        """Something the controller waits for changed: reconcile soon."""
        self._at(1.0)

    def _at(self, delay_s: float) -> None:
        t = self.c.now + delay_s
        if self._next is not None and not self._next.cancelled and self._next.t_s <= t:
            return
        if self._next is not None:
            self._next.cancel()
        self._next = self.c.loop.schedule(
            t, self.reconcile, priority=Priority.OPERATOR, label="upgrade controller"
        )

    # ----- snapshot -----
    def _pod(self, pod: Pod) -> UpgradePod:
        return UpgradePod(
            name=pod.name,
            namespace=pod.namespace,
            labels=pod.template.labels,
            phase=_PHASE[pod.phase],
            uses_gpu=bool(pod.gpu_ids) or any("nvidia.com/" in k for k in pod.requests),
            owner_kind=pod.owner.kind if pod.owner else None,
            terminating=pod.is_deleted,
        )

    def _node(self, node: Node) -> UpgradeNode:
        state = self.agent.state_of(node.name)
        run = self.agent.runs[node.name]
        return UpgradeNode(
            name=node.name,
            state=UpgradeState(node.upgrade_state),
            driver_version=node.driver_version or "",
            driver_pod_ready=state not in _DRIVER_NOT_READY,
            driver_restart_count=run.failures if state is GpuNodeState.DRIVER_FAILED else 0,
            unschedulable=node.unschedulable,
            ready=node.ready and not node.lost,
            validator_ready=state in _PAST_VALIDATION,
            pods=tuple(self._pod(p) for p in self.c.store.pods_on(node)),
            time_in_state_s=self.c.now - node.upgrade_state_since_s,
        )

    # ----- reconcile -----
    def reconcile(self) -> None:
        self._next = None
        store = self.c.store
        # The library builds its state from the driver DaemonSet's pods: a node without a driver
        # pod yet (still joining) is not part of the rollout.
        nodes = [store.nodes[n] for n in store.node_order if store.nodes[n].driver_version]
        decision = decide_upgrades(
            UpgradeSnapshot(tuple(self._node(n) for n in nodes)),
            self.agent.policy,
            requeue_s=self.agent.settings.upgrade_requeue,
        )
        self.num_reconciles += 1
        self.max_in_progress = max(self.max_in_progress, decision.num_in_progress)
        self.max_unavailable_seen = max(self.max_unavailable_seen, decision.num_unavailable)
        for node, action in zip(nodes, decision.actions, strict=True):
            self._apply(node, action)
        if decision.requeue_after_s != float("inf"):
            self._at(max(1.0, decision.requeue_after_s))

    def _apply(self, node: Node, action: NodeUpgradeAction) -> None:
        c = self.c
        if action.cordon and not node.unschedulable:
            node.unschedulable = True
            c.emit(
                "Node",
                node.name,
                "NodeNotSchedulable",
                f"Node {node.name} cordoned for the driver upgrade",
            )
            c.node_refresh(node, static=True)
        by_key = {p.key: p for p in c.store.pods_on(node)}
        for ref in (*action.delete_pods, *action.drain_pods):
            pod = by_key.get(f"{ref.namespace}/{ref.name}")
            if pod is not None and not pod.is_deleted:
                c.count("upgrade_evictions")
                self.kubelet.delete(
                    pod, "Evicted", "evicted for the GPU driver upgrade", warning=True
                )
        if action.restart_driver_pod:
            self.agent.restart_driver(node)
        if action.uncordon and node.unschedulable:
            node.unschedulable = False
            c.emit("Node", node.name, "NodeSchedulable", f"Node {node.name} uncordoned")
            c.node_refresh(node, static=True)
        if action.next_state.value != node.upgrade_state:
            node.upgrade_state = action.next_state.value
            node.upgrade_state_since_s = c.now
            c.count(f"upgrade_state_{action.next_state.value or 'cleared'}")
            if action.message:
                c.emit(
                    "Node",
                    node.name,
                    action.reason,
                    action.message,
                    warning=action.event_type == "Warning",
                )
