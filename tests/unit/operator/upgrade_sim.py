"""A tiny cluster that applies upgrade decisions, for the upgrade controller's tests."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from gpuplane.api.pod_phase import PodPhase
from gpuplane.operator.cluster_policy import (
    ClusterPolicy,
    DrainSpec,
    DriverSpec,
    DriverUpgradePolicy,
    PodDeletionSpec,
    WaitForCompletionSpec,
)
from gpuplane.operator.upgrade import decide_upgrades
from gpuplane.operator.upgrade_state import (
    NodeUpgradeAction,
    UpgradeDecision,
    UpgradeNode,
    UpgradePod,
    UpgradeSnapshot,
    UpgradeState,
)

OLD, NEW = "535.104.05", "550.54.15"


def make_policy(
    *,
    auto_upgrade: bool = True,
    max_parallel: int = 1,
    max_unavailable: int | str = "25%",
    wait: WaitForCompletionSpec | None = None,
    pod_deletion: PodDeletionSpec | None = None,
    drain: DrainSpec | None = None,
    version: str = NEW,
) -> ClusterPolicy:
    upgrade = DriverUpgradePolicy(
        auto_upgrade=auto_upgrade,
        max_parallel_upgrades=max_parallel,
        max_unavailable=max_unavailable,
        pod_deletion=pod_deletion or PodDeletionSpec(),
        wait_for_completion=wait,
        drain=drain or DrainSpec(),
    )
    return ClusterPolicy(driver=DriverSpec(version=version, upgrade_policy=upgrade))


def make_node(name: str = "gpu-0", **kw: Any) -> UpgradeNode:
    base = UpgradeNode(name=name, driver_version=OLD)
    return replace(base, **kw)


@dataclass
class SimNode:
    """World state of one node beyond what the snapshot shows."""

    node: UpgradeNode
    job_steps: dict[str, int] = field(default_factory=dict)  # pod -> steps until it finishes
    bad_driver: bool = False  # new driver pod crash-loops
    restarting: bool = False
    validator_wait: int = 0


class Cluster:
    """Applies each decision like the twin would; one call of :meth:`step` is ``dt_s`` seconds."""

    def __init__(self, nodes: list[SimNode], policy: ClusterPolicy, dt_s: float = 30.0) -> None:
        self.nodes = nodes
        self.policy = policy
        self.dt_s = dt_s
        self.history: list[UpgradeDecision] = []

    def snapshot(self) -> UpgradeSnapshot:
        return UpgradeSnapshot(tuple(n.node for n in self.nodes))

    def step(self) -> UpgradeDecision:
        decision = decide_upgrades(self.snapshot(), self.policy)
        self.history.append(decision)
        for sim, action in zip(self.nodes, decision.actions, strict=True):
            self._apply(sim, action)
        for sim in self.nodes:
            self._advance_world(sim)
        return decision

    def _apply(self, sim: SimNode, action: NodeUpgradeAction) -> None:
        n = sim.node
        doomed = {(p.namespace, p.name) for p in (*action.delete_pods, *action.drain_pods)}
        pods = tuple(
            replace(p, terminating=True) if (p.namespace, p.name) in doomed else p for p in n.pods
        )
        unschedulable = n.unschedulable
        if action.cordon:
            unschedulable = True
        if action.uncordon:
            unschedulable = False
        initially = n.initially_unschedulable
        if action.set_initially_unschedulable is not None:
            initially = action.set_initially_unschedulable
        if action.restart_driver_pod:
            sim.restarting = True
        t = 0.0 if action.changed else n.time_in_state_s
        sim.node = replace(
            n,
            state=action.next_state,
            pods=pods,
            unschedulable=unschedulable,
            initially_unschedulable=initially,
            upgrade_requested=n.upgrade_requested and not action.clear_upgrade_requested,
            driver_pod_terminating=n.driver_pod_terminating or action.restart_driver_pod,
            time_in_state_s=t,
        )

    def _advance_world(self, sim: SimNode) -> None:
        n = sim.node
        pods = []
        for p in n.pods:
            if p.terminating:
                continue  # gone within one step
            left = sim.job_steps.get(p.name)
            if left is not None and p.phase == PodPhase.RUNNING:
                sim.job_steps[p.name] = left - 1
                if left - 1 <= 0:
                    p = replace(p, phase=PodPhase.SUCCEEDED)
            pods.append(p)
        version, ready, restarts = n.driver_version, n.driver_pod_ready, n.driver_restart_count
        validator = n.validator_ready
        if sim.restarting:
            sim.restarting = False
            version, ready, restarts = self.policy.driver.version, not sim.bad_driver, 0
            validator, sim.validator_wait = None, 1
        elif version == self.policy.driver.version and not ready:
            restarts += 4  # crash loop
        elif sim.validator_wait > 0:
            sim.validator_wait -= 1
            validator = ready
        sim.node = replace(
            n,
            pods=tuple(pods),
            driver_version=version,
            driver_pod_ready=ready,
            driver_pod_terminating=False,
            driver_restart_count=restarts,
            validator_ready=validator,
            time_in_state_s=n.time_in_state_s + self.dt_s,
        )

    def run(self, max_steps: int = 2000, quiet_steps: int = 40) -> None:
        """Step until nothing changed for ``quiet_steps`` steps (timeouts had time to fire)."""
        quiet = 0
        for _ in range(max_steps):
            decision = self.step()
            busy = any(
                a.changed or a.delete_pods or a.drain_pods or a.restart_driver_pod
                for a in decision.actions
            )
            quiet = 0 if busy else quiet + 1
            if quiet >= quiet_steps:
                return
        raise AssertionError("upgrade did not settle")

    def states(self) -> list[UpgradeState]:
        return [n.node.state for n in self.nodes]


def gpu_pod(name: str, **kw: Any) -> UpgradePod:
    return replace(UpgradePod(name=name), **kw)
