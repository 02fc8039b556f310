"""The GPU Operator on every node, driven by the operator layer's pure decisions.

Per node it walks the lifecycle (``operator.lifecycle.next_step``): the node joins with no
``nvidia.com/gpu``; driver, toolkit, validator, device plugin (GPUs advertised), DCGM exporter
and GFD (labels) follow with sampled durations, failures and back-off. It applies planned faults
(``operator.faults``) and runs the driver upgrade controller (``operator.upgrade``) on its
requeue schedule, applying each decision (cordon, evictions, driver restart, state label).

Node loss follows the node lifecycle controller: the node turns NotReady after the monitor grace
period, gets the ``unreachable`` NoExecute taint, and its pods are evicted after the default
toleration (300 s) unless the node is back first. A GPU XID that the device plugin treats as
critical makes that GPU unhealthy; the pod using it fails (simplification: a real
restartPolicy=Always pod would crash-loop on the dead GPU until someone deletes it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gpuplane.api.pod_phase import PodPhase
from gpuplane.core.kernel import EventHandle, Priority
from gpuplane.operator.cluster_policy import ClusterPolicy
from gpuplane.operator.faults import (
    FaultEvent,
    FaultEventKind,
    GpuXidFault,
    NodeLostFault,
    plan_faults,
)
from gpuplane.operator.lifecycle import (
    LifecycleStep,
    lose_node,
    next_step,
    recover_node,
    restart_driver,
)
from gpuplane.operator.lifecycle_state import GpuNodeState, transition
from gpuplane.operator.settings import OperatorSettings
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.node_taints import UNREACHABLE_TAINT
from gpuplane.twin.cluster.objects import Node
from gpuplane.twin.kubelet.gpu_devices import node_gfd_labels, pods_on_gpu
from gpuplane.twin.kubelet.simulator import KubeletSim
from gpuplane.twin.operator.summary import OperatorSummary, UpgradeControllerSummary
from gpuplane.twin.operator.upgrade_agent import UpgradeAgent


@dataclass(slots=True)
class _NodeRun:
    state: GpuNodeState = GpuNodeState.JOINING
    failures: int = 0
    pending: EventHandle | None = None
    lost_generation: int = 0


class OperatorNodeAgent:
    def __init__(
        self,
        policy: ClusterPolicy | None,
        settings: OperatorSettings,
        faults: tuple[NodeLostFault | GpuXidFault, ...] = (),
    ) -> None:
        # No ClusterPolicy: a pre-provisioned cluster (driver in the image, device plugin and
        # GFD deployed by hand): GPUs and labels are there from t = 0; faults still apply.
        self.static = policy is None
        self.policy = policy or ClusterPolicy()
        self.settings = settings
        self.faults = faults
        self.runs: dict[str, _NodeRun] = {}
        self.c: Cluster | None = None
        self.kubelet: KubeletSim | None = None
        self.upgrades: UpgradeAgent | None = None

    # ----- setup -----
    def start(self, cluster: Cluster, kubelet: KubeletSim, until_s: float) -> None:
        self.c, self.kubelet = cluster, kubelet
        if self.static:
            for node in cluster.store.nodes.values():
                self.runs[node.name] = _NodeRun(state=GpuNodeState.READY)
                node.gpus_advertised = True
                node.labels.update(node_gfd_labels(node))
                cluster.store.refresh_node(node)
            cluster.generation += 1
            self._plan_faults(until_s)
            return
        for node in cluster.store.nodes.values():
            node.gpus_advertised = False
            node.gpu_state = GpuNodeState.JOINING.value
            self.runs[node.name] = _NodeRun()
            cluster.store.refresh_node(node)
            cluster.emit(
                "Node", node.name, "RegisteredNode", f"Node {node.name} joined the cluster"
            )
            self._advance(node)
        self._plan_faults(until_s)
        self.upgrades = UpgradeAgent(cluster, kubelet, self)
        self.upgrades.start()

    def _plan_faults(self, until_s: float) -> None:
        c = self._c()
        by_pool: dict[str, list[str]] = {}
        for node in c.store.nodes.values():
            by_pool.setdefault(node.pool, []).append(node.name)
        events = plan_faults(
            self.faults,
            by_pool,
            until_s,
            c.rng.stream("faults"),
            labels_by_node={n.name: n.labels for n in c.store.nodes.values()},
            num_gpus_by_node={n.name: n.num_gpus for n in c.store.nodes.values()},
        )
        for ev in events:
            c.loop.schedule(
                ev.t_s,
                self._fault_handler(ev),
                priority=Priority.FAULT,
                label=f"fault {ev.kind} {ev.node}",
            )

    def _fault_handler(self, ev: FaultEvent) -> Callable[[], None]:
        return lambda: self._fault(ev)

    def _c(self) -> Cluster:
        assert self.c is not None
        return self.c

    # ----- lifecycle -----
    def state_of(self, node: str) -> GpuNodeState:
        return self.runs[node].state

    def _advance(self, node: Node) -> None:
        c = self._c()
        run = self.runs[node.name]
        step = next_step(
            run.state,
            self.policy,
            self.settings,
            c.rng.stream(f"operator/{node.name}"),
            failures=run.failures,
        )
        if step is None:
            run.pending = None
            return
        run.pending = c.loop.after(
            step.delay_s,
            lambda: self._apply(node, step),
            priority=Priority.NODE,
            label=f"{step.next_state} {node.name}",
        )

    def _apply(self, node: Node, step: LifecycleStep, *, advance: bool = True) -> None:
        c = self._c()
        run = self.runs[node.name]
        previous = run.state
        run.state = transition(run.state, step.next_state)
        run.failures = run.failures + 1 if step.failed else (0 if step.component else run.failures)
        node.gpu_state = run.state.value
        if run.state is GpuNodeState.DRIVER_UPGRADING or (
            run.state is GpuNodeState.DRIVER_INSTALLING and previous is GpuNodeState.JOINING
        ):
            # The DaemonSet creates the driver pod from its current revision: that pod carries
            # the policy's version from the start (it is "in sync" while still installing).
            node.driver_version = self.policy.driver.version
        c.emit("Node", node.name, step.reason, step.message, warning=step.event_type == "Warning")
        self._apply_flags(node, step)
        if advance:
            self._advance(node)
        if self.upgrades is not None:
            self.upgrades.poke()

    def _apply_flags(self, node: Node, step: LifecycleStep) -> None:
        c = self._c()
        if step.advertise_gpus is not None and step.advertise_gpus != node.gpus_advertised:
            if not step.advertise_gpus:
                self._evict_gpu_pods(
                    node, "Evicted", "evicted: the GPU stack on the node is going down"
                )
            node.gpus_advertised = step.advertise_gpus
            c.node_refresh(node, static=True)
        if step.apply_gfd_labels:
            node.labels.update(node_gfd_labels(node))
            c.node_refresh(node, static=True)

    def _evict_gpu_pods(self, node: Node, reason: str, message: str) -> None:
        assert self.kubelet is not None
        for pod in self._c().store.pods_on(node):
            if pod.gpu_ids or pod.ext_device_ids:
                self.kubelet.delete(pod, reason, message, warning=True)

    def restart_driver(self, node: Node) -> None:
        run = self.runs[node.name]
        if run.state in (GpuNodeState.JOINING, GpuNodeState.NODE_LOST):
            # No driver pod to delete: the one the DaemonSet creates next has the new version.
            node.driver_version = self.policy.driver.version
            return
        if run.pending is not None:
            run.pending.cancel()
        self._apply(node, restart_driver(run.state))

    def summary(self) -> OperatorSummary:
        states: dict[str, int] = {}
        upgrade: dict[str, int] = {}
        for name, run in sorted(self.runs.items()):
            states[run.state.value] = states.get(run.state.value, 0) + 1
            label = self._c().store.nodes[name].upgrade_state or "(none)"
            upgrade[label] = upgrade.get(label, 0) + 1
        by_state = dict(sorted(states.items()))
        if self.static:
            return OperatorSummary("pre-provisioned", by_state)
        controller = (
            UpgradeControllerSummary(
                reconciles=self.upgrades.num_reconciles,
                max_nodes_in_progress=self.upgrades.max_in_progress,
                max_nodes_unavailable=self.upgrades.max_unavailable_seen,
            )
            if self.upgrades is not None
            else None
        )
        return OperatorSummary(
            "gpu-operator",
            by_state,
            driver_version=self.policy.driver.version,
            nodes_by_upgrade_state=dict(sorted(upgrade.items())),
            upgrade_controller=controller,
        )

    def update_policy(self, policy: ClusterPolicy) -> None:
        """The ClusterPolicy changed (e.g. a new driver version): the upgrade controller reacts."""
        c = self._c()
        old = self.policy.driver.version
        self.policy = policy
        c.emit(
            "ClusterPolicy",
            policy.name,
            "Updated",
            f"driver version {old} -> {policy.driver.version}"
            if old != policy.driver.version
            else "ClusterPolicy updated",
        )
        if self.upgrades is not None:
            self.upgrades.poke()

    # ----- faults -----
    def _fault(self, ev: FaultEvent) -> None:
        c = self._c()
        node = c.store.nodes[ev.node]
        run = self.runs[node.name]
        if ev.kind is FaultEventKind.NODE_LOST:
            if run.pending is not None:
                run.pending.cancel()
            node.lost = True
            run.lost_generation += 1
            if self.static:
                c.emit(
                    "Node",
                    node.name,
                    "NodeNotReady",
                    "Node is not ready: kubelet stopped posting node status",
                    warning=True,
                )
                c.node_refresh(node, static=True)
            else:
                self._apply(node, lose_node(run.state), advance=False)
            generation = run.lost_generation
            c.loop.after(
                c.settings.node_monitor_grace_s,
                lambda: self._not_ready(node, generation),
                priority=Priority.NODE,
                label=f"not-ready {node.name}",
            )
        elif ev.kind is FaultEventKind.NODE_RECOVERED:
            node.lost = False
            node.ready = True
            node.taints = [t for t in node.taints if t != UNREACHABLE_TAINT]
            self._evict_all(node, "NodeLost", "node rebooted; its pods were lost")
            if self.static:
                c.emit("Node", node.name, "NodeReady", "Node is ready again")
            else:
                self._apply(node, recover_node(run.state))
            c.node_refresh(node, static=True)
        elif ev.kind is FaultEventKind.GPU_XID:
            self._xid(node, ev)
        else:
            assert ev.gpu_index is not None
            node.gpu_healthy[ev.gpu_index] = True
            c.emit("Node", node.name, "GpuHealthy", f"GPU {ev.gpu_index} is healthy again (reset)")
            c.node_refresh(node)

    def _xid(self, node: Node, ev: FaultEvent) -> None:
        c = self._c()
        assert ev.gpu_index is not None and self.kubelet is not None
        c.emit(
            "Node",
            node.name,
            "GpuXidError",
            ev.message or f"XID {ev.xid} on GPU {ev.gpu_index}",
            warning=True,
        )
        if not ev.marks_unhealthy:
            return
        node.gpu_healthy[ev.gpu_index] = False
        for uid in pods_on_gpu(node, ev.gpu_index):
            pod = c.store.pods[uid]
            self.kubelet.finish(
                pod,
                PodPhase.FAILED,
                "GpuXidError",
                f"XID {ev.xid} on GPU {ev.gpu_index}: the GPU is unhealthy",
            )
        c.node_refresh(node)

    def _not_ready(self, node: Node, generation: int) -> None:
        c = self._c()
        if not node.lost or self.runs[node.name].lost_generation != generation:
            return
        node.ready = False
        if UNREACHABLE_TAINT not in node.taints:
            node.taints.append(UNREACHABLE_TAINT)
        c.emit(
            "Node",
            node.name,
            "NodeNotReady",
            "Node is unreachable: taint node.kubernetes.io/unreachable:NoExecute",
            warning=True,
        )
        c.node_refresh(node, static=True)
        c.loop.after(
            c.settings.default_toleration_s,
            lambda: self._evict_lost(node, generation),
            priority=Priority.NODE,
            label=f"taint eviction {node.name}",
        )

    def _evict_lost(self, node: Node, generation: int) -> None:
        if node.lost and self.runs[node.name].lost_generation == generation:
            self._evict_all(
                node,
                "TaintManagerEviction",
                "Marking for deletion: node.kubernetes.io/unreachable NoExecute",
            )

    def _evict_all(self, node: Node, reason: str, message: str) -> None:
        assert self.kubelet is not None
        for pod in self._c().store.pods_on(node):
            self.kubelet.delete(pod, reason, message, warning=True)
