"""A driver upgrade through the twin never takes more nodes out than the policy allows."""

from __future__ import annotations

import dataclasses
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.fit.workload_objects import DeploymentSpec
from gpuplane.k8s.scenario.cluster_policy import parse_cluster_policy_yaml
from gpuplane.operator.settings import OperatorSettings
from gpuplane.twin.build import build_simulation
from gpuplane.twin.operator.node_agent import OperatorNodeAgent
from gpuplane.twin.scenario.spec import Workload
from gpuplane.twin.simulation import Simulation
from tests.factories import make_pool, make_template

POLICY = """
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {{name: cluster-policy}}
spec:
  driver:
    version: "550.54.15"
    upgradePolicy:
      autoUpgrade: true
      maxParallelUpgrades: {parallel}
      maxUnavailable: {unavailable}
      podDeletion: {{force: true}}
      drain: {{enable: true, force: true}}
"""


def run_upgrade(nodes: int, parallel: int, unavailable: str, seed: int) -> tuple[Simulation, int]:
    policy, _ = parse_cluster_policy_yaml(
        # an IntOrString: a bare integer, or a quoted percentage
        POLICY.format(
            parallel=parallel,
            unavailable=unavailable if unavailable.isdigit() else f'"{unavailable}"',
        ),
        "policy.yaml",
    )
    agent = OperatorNodeAgent(policy, OperatorSettings())
    serve = DeploymentSpec(
        name="serve",
        namespace="d",
        template=make_template(gpus=2, restart="Always"),
        replicas=nodes * 2,
    )
    sim = build_simulation(
        [make_pool(count=nodes)],
        [Workload("serve", serve)],
        seed=seed,
        node_agent=agent,
        check_invariants=True,
    )
    new = dataclasses.replace(policy, driver=dataclasses.replace(policy.driver, version="560.1"))
    sim.cluster.loop.schedule(3600.0, lambda: agent.update_policy(new), priority=0, label="patch")
    result = sim.run(12 * 3600.0)
    # Nodes cordoned at the same time, from the event stream (ordered by time).
    cordoned, peak = 0, 0
    for e in result.events:
        if e.reason == "NodeNotSchedulable":
            cordoned += 1
        elif e.reason == "NodeSchedulable":
            cordoned -= 1
        peak = max(peak, cordoned)
    return sim, peak


@settings(max_examples=12, deadline=None)
@given(
    nodes=st.integers(2, 9),
    parallel=st.integers(0, 4),
    unavailable=st.sampled_from(["1", "2", "25%", "50%", "100%"]),
    seed=st.integers(0, 99),
)
def test_upgrade_respects_limits(nodes: int, parallel: int, unavailable: str, seed: int) -> None:
    sim, peak = run_upgrade(nodes, parallel, unavailable, seed)
    limit = (
        math.ceil(nodes * int(unavailable[:-1]) / 100)
        if unavailable.endswith("%")
        else int(unavailable)
    )
    if parallel:
        limit = min(limit, parallel)
    assert peak <= max(1, limit)
    states = {n.upgrade_state for n in sim.cluster.store.nodes.values()}
    assert states == {"upgrade-done"}
    assert all(n.driver_version == "560.1" for n in sim.cluster.store.nodes.values())
    assert not any(n.unschedulable for n in sim.cluster.store.nodes.values())
