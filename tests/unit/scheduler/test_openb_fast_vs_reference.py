"""The fast simulator (vectorised policies, score cache, kept F) and the plain reference (loops,
every node scored on every pod) must place every pod on the same node and GPU."""

from __future__ import annotations

from functools import lru_cache

import pytest

from gpuplane.scheduler.openb.reference import simulate_reference
from gpuplane.scheduler.openb.simulator import simulate
from gpuplane.scheduler.openb.trace import NodeTable, PodTable, load_nodes, load_pods
from gpuplane.scheduler.openb.typical import typical_pods
from gpuplane.scheduler.openb.workload import make_workload
from gpuplane.scheduler.policies import PolicyContext, make_policy
from gpuplane.scheduler.policies.gpuplane import GpuplanePolicy, GpuplaneSettings
from gpuplane.scheduler.policies.types import Policy
from tests.unit.scheduler.openb_factories import DATA, NODE_CSV, subset_nodes, subset_pods

NUM_EVENTS = 300
DETERMINISTIC = (
    "dotprod",
    "clustering",
    "packing",
    "bestfit",
    "fgd",
    "gpuplane",
    "gpuplane-relief",
)
# gpuplane with part of the relief credit on (the CPU-short traces turn it fully on).
RELIEF = GpuplaneSettings(relief_weight=0.5)


@lru_cache(maxsize=4)
def small_trace(trace: str) -> tuple[NodeTable, PodTable]:
    """Every 25th node (49 nodes, all models) and every 20th pod of the trace."""
    nodes = load_nodes(NODE_CSV)
    pods = load_pods(DATA / f"openb_pod_list_{trace}.csv")
    return (
        subset_nodes(nodes, range(0, nodes.num_nodes, 25)),
        subset_pods(pods, range(0, pods.num_pods, 20)),
    )


@pytest.mark.parametrize("trace", ["default", "gpuspec33"])
@pytest.mark.parametrize("policy", DETERMINISTIC)
def test_fast_and_reference_choose_the_same_nodes_and_gpus(trace: str, policy: str) -> None:
    nodes, pods = small_trace(trace)
    typical = typical_pods(pods, nodes.model_names)
    workload = make_workload(pods, nodes.num_nodes, nodes.total_gpus, seed=42)
    if policy == "gpuplane-relief":
        fast_policy: Policy = GpuplanePolicy(typical, RELIEF)
        slow = simulate_reference(nodes, pods, workload, "gpuplane", typical, NUM_EVENTS, RELIEF)
    else:
        fast_policy = make_policy(policy, PolicyContext(typical=typical))
        slow = simulate_reference(nodes, pods, workload, policy, typical, NUM_EVENTS)
    fast = simulate(nodes, pods, workload, fast_policy, typical=typical)
    got = list(zip(fast.node.tolist(), fast.gpu.tolist(), strict=True))[:NUM_EVENTS]
    assert got == slow
    # The runs must reach a full cluster, where failures and ties are common.
    assert any(node < 0 for node, _ in slow)
