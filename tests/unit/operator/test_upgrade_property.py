"""Rollouts over random clusters never break maxParallelUpgrades or maxUnavailable."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.operator.cluster_policy import (
    DrainSpec,
    PodDeletionSpec,
    WaitForCompletionSpec,
    percent_or_int,
)
from gpuplane.operator.upgrade import upgrades_available
from gpuplane.operator.upgrade_state import UpgradePod, UpgradeState
from tests.unit.operator.upgrade_sim import Cluster, SimNode, gpu_pod, make_node, make_policy

U = UpgradeState
IN_PROGRESS_FREE = {U.UNKNOWN, U.DONE, U.UPGRADE_REQUIRED}


@dataclass(frozen=True)
class PodPlan:
    uses_gpu: bool
    owner_kind: str | None
    empty_dir: bool
    job_steps: int


pod_plans = st.builds(
    PodPlan,
    uses_gpu=st.booleans(),
    owner_kind=st.sampled_from(["ReplicaSet", "Job", "StatefulSet", "DaemonSet", None]),
    empty_dir=st.booleans(),
    job_steps=st.integers(1, 30),
)


@dataclass(frozen=True)
class NodePlan:
    pods: list[PodPlan]
    bad_driver: bool


def build(index: int, plan: NodePlan) -> SimNode:
    pods: list[UpgradePod] = []
    jobs: dict[str, int] = {}
    for j, p in enumerate(plan.pods):
        name = f"n{index}-p{j}"
        labels = {"batch": "yes"} if p.owner_kind == "Job" else {}
        pods.append(
            gpu_pod(
                name,
                uses_gpu=p.uses_gpu,
                owner_kind=p.owner_kind,
                uses_empty_dir=p.empty_dir,
                labels=labels,
            )
        )
        if p.owner_kind == "Job":
            jobs[name] = p.job_steps
    node = make_node(f"n{index}", pods=tuple(pods))
    return SimNode(node, job_steps=jobs, bad_driver=plan.bad_driver)


node_plans = st.builds(
    NodePlan,
    pods=st.lists(pod_plans, max_size=4),
    bad_driver=st.booleans(),
)
max_unavailable = st.one_of(st.integers(0, 14), st.integers(0, 100).map(lambda p: f"{p}%"))


def check_rollout(cluster: Cluster, max_parallel: int, limit: int) -> None:
    """Limits hold after every decision; at rest, nodes are done, failed, or held back."""
    for _ in range(3000):
        cluster.step()
        states = cluster.states()
        in_progress = sum(s not in IN_PROGRESS_FREE for s in states)
        unavailable = sum(
            n.node.unschedulable or not n.node.ready or n.node.state == U.CORDON_REQUIRED
            for n in cluster.nodes
        )
        if max_parallel > 0:
            assert in_progress <= max_parallel, states
        assert unavailable <= limit, states
        if len(cluster.history) > 40 and all(
            not (a.changed or a.delete_pods or a.drain_pods or a.restart_driver_pod)
            for d in cluster.history[-40:]
            for a in d.actions
        ):
            break
    else:
        raise AssertionError("no rest")
    nodes = tuple(n.node for n in cluster.nodes)
    blocked = upgrades_available(nodes, max_parallel, limit) <= 0
    for node in nodes:
        assert node.state in (U.DONE, U.FAILED) or (node.state == U.UPGRADE_REQUIRED and blocked), (
            node.state,
            blocked,
        )


@settings(max_examples=60, deadline=None)
@given(
    plans=st.lists(node_plans, min_size=1, max_size=10),
    max_parallel=st.integers(0, 4),
    max_unavailable=max_unavailable,
    force=st.booleans(),
    delete_empty_dir=st.booleans(),
    drain=st.booleans(),
    drain_timeout=st.sampled_from([0, 60, 300]),
    wait_timeout=st.sampled_from([0, 120]),
)
def test_rollout_respects_limits_and_settles(
    plans: list[NodePlan],
    max_parallel: int,
    max_unavailable: int | str,
    force: bool,
    delete_empty_dir: bool,
    drain: bool,
    drain_timeout: int,
    wait_timeout: int,
) -> None:
    policy = make_policy(
        max_parallel=max_parallel,
        max_unavailable=max_unavailable,
        wait=WaitForCompletionSpec(pod_selector="batch=yes", timeout_s=wait_timeout),
        pod_deletion=PodDeletionSpec(force=force, delete_empty_dir=delete_empty_dir),
        drain=DrainSpec(
            enable=drain, force=force, delete_empty_dir=delete_empty_dir, timeout_s=drain_timeout
        ),
    )
    cluster = Cluster([build(i, p) for i, p in enumerate(plans)], policy)
    limit = percent_or_int(max_unavailable, len(plans))
    check_rollout(cluster, max_parallel, limit)


@settings(max_examples=30, deadline=None)
@given(
    num_nodes=st.integers(1, 12),
    max_parallel=st.integers(0, 5),
    max_unavailable=st.one_of(st.integers(1, 14), st.integers(1, 100).map(lambda p: f"{p}%")),
)
def test_without_failures_every_node_finishes(
    num_nodes: int, max_parallel: int, max_unavailable: int | str
) -> None:
    nodes = [SimNode(make_node(f"n{i}", pods=(gpu_pod(f"p{i}"),))) for i in range(num_nodes)]
    cluster = Cluster(
        nodes, make_policy(max_parallel=max_parallel, max_unavailable=max_unavailable)
    )
    check_rollout(cluster, max_parallel, percent_or_int(max_unavailable, num_nodes))
    assert cluster.states() == [U.DONE] * num_nodes
    assert all(not n.node.unschedulable for n in cluster.nodes)
