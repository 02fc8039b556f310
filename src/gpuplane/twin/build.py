"""A ready-to-run Simulation from a loaded scenario (``twin.spec.ScenarioSpec``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from gpuplane.core.kernel import Priority
from gpuplane.operator.cluster_policy import ClusterPolicy
from gpuplane.twin.operator.node_agent import OperatorNodeAgent
from gpuplane.twin.scenario.spec import ScenarioSpec
from gpuplane.twin.simulation import Simulation


def simulation_from_spec(
    spec: ScenarioSpec, *, seed: int, check_invariants: bool = False, keep_events: bool = True
) -> Simulation:
    operator = OperatorNodeAgent(spec.cluster_policy, spec.operator, spec.faults)
    sim = Simulation(
        spec.node_pools,
        spec.workloads,
        seed=seed,
        settings=replace(spec.control_plane, keep_events=keep_events),
        node_agent=operator,
        check_invariants=check_invariants,
        name=spec.name,
        dra=spec.dra,
        mig_config_changes=spec.mig_config_changes,
        serving=spec.serving,
        scaled_objects=spec.scaled_objects,
    )
    for t_s, policy in spec.cluster_policy_updates:
        sim.cluster.loop.schedule(
            t_s,
            _updater(operator, policy),
            priority=Priority.OPERATOR,
            label="ClusterPolicy update",
        )
    return sim


def _updater(agent: OperatorNodeAgent, policy: ClusterPolicy) -> Callable[[], None]:
    return lambda: agent.update_policy(policy)
