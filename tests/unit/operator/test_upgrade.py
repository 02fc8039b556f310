from __future__ import annotations

import math
from dataclasses import replace
from itertools import product
from typing import Any

import pytest

from gpuplane.api.pod_phase import PodPhase
from gpuplane.operator.cluster_policy import (
    ClusterPolicy,
    DrainSpec,
    PodDeletionSpec,
    WaitForCompletionSpec,
)
from gpuplane.operator.upgrade import decide_upgrades, upgrades_available
from gpuplane.operator.upgrade_state import (
    EVENT_REASON,
    UPGRADE_STATE_LABEL,
    VALID_TRANSITIONS,
    IllegalUpgradeTransitionError,
    NodeUpgradeAction,
    PodRef,
    UpgradeNode,
    UpgradePod,
    UpgradeSnapshot,
    UpgradeState,
    transition,
)
from tests.unit.operator.upgrade_sim import (
    NEW,
    Cluster,
    SimNode,
    gpu_pod,
    make_node,
    make_policy,
)

U = UpgradeState


def one(node: UpgradeNode, policy: ClusterPolicy | None = None) -> NodeUpgradeAction:
    decision = decide_upgrades(UpgradeSnapshot((node,)), policy or make_policy())
    return decision.actions[0]


def test_names_are_the_real_ones() -> None:
    assert UPGRADE_STATE_LABEL == "nvidia.com/gpu-driver-upgrade-state"
    assert EVENT_REASON == "GPUDriverUpgrade"
    assert {str(s) for s in U} == {
        "",
        "upgrade-required",
        "cordon-required",
        "wait-for-jobs-required",
        "pod-deletion-required",
        "drain-required",
        "pod-restart-required",
        "validation-required",
        "uncordon-required",
        "upgrade-done",
        "upgrade-failed",
    }


def test_every_move_outside_the_table_is_refused() -> None:
    assert set(VALID_TRANSITIONS) == set(U)
    for a, b in product(U, U):
        if b in VALID_TRANSITIONS[a]:
            assert transition(a, b) is b
        else:
            with pytest.raises(IllegalUpgradeTransitionError):
                transition(a, b)


def test_one_node_walks_the_whole_chain() -> None:
    cluster = Cluster([SimNode(make_node(pods=(gpu_pod("train"),)))], make_policy())
    seen = [cluster.nodes[0].node.state]
    for _ in range(30):
        cluster.step()
        if cluster.nodes[0].node.state != seen[-1]:
            seen.append(cluster.nodes[0].node.state)
    assert seen == [
        U.UNKNOWN,
        U.UPGRADE_REQUIRED,
        U.CORDON_REQUIRED,
        U.WAIT_FOR_JOBS_REQUIRED,
        U.POD_DELETION_REQUIRED,
        U.POD_RESTART_REQUIRED,
        U.VALIDATION_REQUIRED,
        U.UNCORDON_REQUIRED,
        U.DONE,
    ]
    node = cluster.nodes[0].node
    assert node.driver_version == NEW and not node.unschedulable and node.pods == ()
    actions = [a for d in cluster.history for a in d.actions]
    assert [a.cordon for a in actions].count(True) == 1
    assert [a.uncordon for a in actions].count(True) == 1
    assert any(a.delete_pods == (PodRef("default", "train"),) for a in actions)
    assert any(a.restart_driver_pod for a in actions)


def test_a_node_whose_driver_matches_goes_straight_to_done() -> None:
    action = one(make_node(driver_version=NEW))
    assert action.next_state == U.DONE and not action.cordon
    assert one(make_node(driver_version=NEW, state=U.DONE)).changed is False


def test_done_node_with_a_new_version_needs_an_upgrade_and_remembers_a_cordon() -> None:
    action = one(make_node(state=U.DONE, unschedulable=True))
    assert action.next_state == U.UPGRADE_REQUIRED
    assert action.set_initially_unschedulable is True


def test_upgrade_requested_annotation_forces_an_upgrade_and_is_cleared() -> None:
    action = one(make_node(driver_version=NEW, upgrade_requested=True))
    assert action.next_state == U.UPGRADE_REQUIRED
    action = one(make_node(driver_version=NEW, upgrade_requested=True, state=U.UPGRADE_REQUIRED))
    assert action.next_state == U.CORDON_REQUIRED and action.clear_upgrade_requested


def test_auto_upgrade_off_moves_nothing_and_clears_labels() -> None:
    nodes = (make_node("a", state=U.DRAIN_REQUIRED, unschedulable=True), make_node("b"))
    decision = decide_upgrades(UpgradeSnapshot(nodes), make_policy(auto_upgrade=False))
    assert not decision.enabled and math.isinf(decision.requeue_after_s)
    a, b = decision.actions
    assert a.next_state == U.UNKNOWN and not (a.uncordon or a.cordon or a.drain_pods)
    assert b.next_state == U.UNKNOWN and not b.changed


def test_sandbox_workloads_disable_the_controller() -> None:
    policy = replace(make_policy(), sandbox_workloads=True)
    assert not decide_upgrades(UpgradeSnapshot((make_node(),)), policy).enabled


def required(n: int, **kw: Any) -> tuple[UpgradeNode, ...]:
    return tuple(make_node(f"n{i}", state=U.UPGRADE_REQUIRED, **kw) for i in range(n))


@pytest.mark.parametrize(
    ("n", "max_parallel", "max_unavailable", "started"),
    [
        (10, 1, "25%", 1),
        (10, 0, "25%", 3),  # 0 = no parallel limit; 25% of 10 rounds up to 3
        (10, 0, "100%", 10),
        (10, 5, 2, 2),
        (10, 0, 0, 0),
        (3, 0, "1%", 1),  # ceil(0.03) = 1
        (4, 2, 10, 2),
    ],
)
def test_slots_follow_both_limits(
    n: int, max_parallel: int, max_unavailable: int | str, started: int
) -> None:
    policy = make_policy(max_parallel=max_parallel, max_unavailable=max_unavailable)
    decision = decide_upgrades(UpgradeSnapshot(required(n)), policy)
    assert sum(a.next_state == U.CORDON_REQUIRED for a in decision.actions) == started


def test_unavailable_nodes_count_against_max_unavailable() -> None:
    nodes = (*required(3), make_node("down", driver_version=NEW, state=U.DONE, ready=False))
    policy = make_policy(max_parallel=0, max_unavailable=1)
    decision = decide_upgrades(UpgradeSnapshot(nodes), policy)
    assert decision.num_unavailable == 1 and decision.upgrades_available == 0
    assert not any(a.next_state == U.CORDON_REQUIRED for a in decision.actions)


def test_a_cordoned_node_proceeds_without_a_slot() -> None:
    nodes = (
        make_node("busy", state=U.DRAIN_REQUIRED, unschedulable=True),
        make_node("cordoned", state=U.UPGRADE_REQUIRED, unschedulable=True),
        make_node("free", state=U.UPGRADE_REQUIRED),
    )
    decision = decide_upgrades(UpgradeSnapshot(nodes), make_policy(max_parallel=1))
    assert decision.for_node("cordoned").next_state == U.CORDON_REQUIRED
    assert decision.for_node("free").next_state == U.UPGRADE_REQUIRED
    assert "limit reached" in decision.for_node("free").message


def test_skip_label_keeps_a_node_out() -> None:
    action = one(make_node(state=U.UPGRADE_REQUIRED, skip_upgrade=True))
    assert not action.changed and "skipping" in action.message


def test_failed_nodes_hold_their_slot() -> None:
    nodes = (make_node("bad", state=U.FAILED, unschedulable=True), *required(2))
    assert upgrades_available(nodes, 1, 3) == 0


def test_initially_cordoned_node_stays_cordoned() -> None:
    node = make_node(state=U.UPGRADE_REQUIRED, unschedulable=True, initially_unschedulable=True)
    cluster = Cluster([SimNode(node)], make_policy())
    cluster.run()
    final = cluster.nodes[0].node
    assert final.state == U.DONE and final.unschedulable and not final.initially_unschedulable
    assert not any(a.uncordon for d in cluster.history for a in d.actions)


def test_wait_for_jobs_waits_then_times_out() -> None:
    wait = WaitForCompletionSpec(pod_selector="kind=batch", timeout_s=60)
    policy = make_policy(wait=wait)
    job = gpu_pod("job", labels={"kind": "batch"}, owner_kind="Job")
    node = make_node(state=U.WAIT_FOR_JOBS_REQUIRED, unschedulable=True, pods=(job,))
    decision = decide_upgrades(UpgradeSnapshot((node,)), policy)
    assert not decision.actions[0].changed
    assert decision.requeue_after_s == pytest.approx(61)  # wake up when the timeout can fire
    assert not one(replace(node, time_in_state_s=60.0), policy).changed
    assert one(replace(node, time_in_state_s=61.0), policy).next_state == U.POD_DELETION_REQUIRED
    finished = replace(node, pods=(replace(job, phase=PodPhase.SUCCEEDED),))
    assert one(finished, policy).next_state == U.POD_DELETION_REQUIRED
    forever = make_policy(wait=WaitForCompletionSpec(pod_selector="kind=batch", timeout_s=0))
    assert not one(replace(node, time_in_state_s=1e9), forever).changed
    assert one(node, make_policy()).next_state == U.POD_DELETION_REQUIRED  # no selector: no wait


def deleting(*pods: UpgradePod, **kw: Any) -> UpgradeNode:
    return make_node(state=U.POD_DELETION_REQUIRED, unschedulable=True, pods=pods, **kw)


def test_pod_deletion_deletes_gpu_pods_then_moves_on() -> None:
    cpu = gpu_pod("web", uses_gpu=False)
    done_job = gpu_pod("old", phase=PodPhase.SUCCEEDED, owner_kind="Job")
    action = one(deleting(gpu_pod("train"), cpu, done_job))
    assert action.delete_pods == (PodRef("default", "train"),) and not action.changed
    assert one(deleting(cpu, done_job)).next_state == U.POD_RESTART_REQUIRED
    again = one(deleting(gpu_pod("train", terminating=True)))
    assert again.delete_pods == () and not again.changed  # already terminating: just wait


def test_pod_deletion_selector_adds_pods_without_gpu_requests() -> None:
    runtime_class_pod = gpu_pod("rc", uses_gpu=False, labels={"gpu": "yes"})
    policy = make_policy(pod_deletion=PodDeletionSpec(pod_selector="gpu=yes"))
    assert one(deleting(runtime_class_pod), policy).delete_pods == (PodRef("default", "rc"),)


@pytest.mark.parametrize(
    ("pod", "spec"),
    [
        (gpu_pod("bare", owner_kind=None), PodDeletionSpec()),
        (gpu_pod("scratch", uses_empty_dir=True), PodDeletionSpec()),
        (gpu_pod("ds", owner_kind="DaemonSet"), PodDeletionSpec(force=True, delete_empty_dir=True)),
    ],
)
def test_pods_the_drain_helper_refuses_fail_or_fall_back_to_drain(
    pod: UpgradePod, spec: PodDeletionSpec
) -> None:
    no_drain = make_policy(pod_deletion=spec)
    action = one(deleting(pod), no_drain)
    assert action.next_state == U.FAILED and action.event_type == "Warning"
    assert "Cannot delete all required pods" in action.message
    with_drain = make_policy(pod_deletion=spec, drain=DrainSpec(enable=True))
    assert one(deleting(pod), with_drain).next_state == U.DRAIN_REQUIRED


def test_force_and_delete_empty_dir_allow_those_pods() -> None:
    spec = PodDeletionSpec(force=True, delete_empty_dir=True)
    pods = (gpu_pod("bare", owner_kind=None), gpu_pod("scratch", uses_empty_dir=True))
    assert len(one(deleting(*pods), make_policy(pod_deletion=spec)).delete_pods) == 2


def test_pod_deletion_timeout() -> None:
    node = deleting(gpu_pod("stuck", terminating=True), time_in_state_s=301.0)
    assert one(node).next_state == U.FAILED
    assert not one(replace(node, time_in_state_s=300.0)).changed
    forever = make_policy(pod_deletion=PodDeletionSpec(timeout_s=0))
    assert not one(replace(node, time_in_state_s=1e6), forever).changed


def draining(*pods: UpgradePod, **kw: Any) -> UpgradeNode:
    return make_node(state=U.DRAIN_REQUIRED, unschedulable=True, pods=pods, **kw)


def test_drain_disabled_goes_straight_to_pod_restart() -> None:
    assert one(draining(gpu_pod("x"))).next_state == U.POD_RESTART_REQUIRED


def test_drain_evicts_matching_pods_but_not_daemonsets_or_skipped_ones() -> None:
    policy = make_policy(drain=DrainSpec(enable=True, pod_selector="tier!=infra"))
    pods = (
        gpu_pod("web", uses_gpu=False),
        gpu_pod("agent", owner_kind="DaemonSet"),
        gpu_pod("operator", labels={"nvidia.com/gpu-driver-upgrade-drain.skip": "true"}),
        gpu_pod("infra", labels={"tier": "infra"}),
    )
    action = one(draining(*pods), policy)
    assert action.drain_pods == (PodRef("default", "web"),)
    assert one(draining(pods[1], pods[2], pods[3]), policy).next_state == U.POD_RESTART_REQUIRED


def test_drain_refusal_and_timeout_fail_the_upgrade() -> None:
    policy = make_policy(drain=DrainSpec(enable=True, timeout_s=60))
    refused = one(draining(gpu_pod("bare", uses_gpu=False, owner_kind=None)), policy)
    assert refused.next_state == U.FAILED and "no controller" in refused.message
    slow = draining(gpu_pod("slow", terminating=True), time_in_state_s=61.0)
    assert one(slow, policy).next_state == U.FAILED
    forced = make_policy(drain=DrainSpec(enable=True, force=True))
    assert one(draining(gpu_pod("bare", owner_kind=None)), forced).drain_pods


def restarting(**kw: Any) -> UpgradeNode:
    return make_node(state=U.POD_RESTART_REQUIRED, unschedulable=True, **kw)


def test_pod_restart_restarts_once_then_waits_for_ready() -> None:
    assert one(restarting()).restart_driver_pod
    assert not one(restarting(driver_pod_terminating=True)).restart_driver_pod
    waiting = one(restarting(driver_version=NEW, driver_pod_ready=False, driver_restart_count=3))
    assert not waiting.changed and not waiting.restart_driver_pod
    assert one(restarting(driver_version=NEW)).next_state == U.VALIDATION_REQUIRED


def test_crash_looping_new_driver_fails_the_upgrade() -> None:
    node = restarting(driver_version=NEW, driver_pod_ready=False, driver_restart_count=11)
    assert one(node).next_state == U.FAILED
    assert not one(replace(node, driver_restart_count=10)).changed


def test_without_validation_a_ready_driver_goes_to_uncordon() -> None:
    decision = decide_upgrades(
        UpgradeSnapshot((restarting(driver_version=NEW),)), make_policy(), validation_enabled=False
    )
    assert decision.actions[0].next_state == U.UNCORDON_REQUIRED


def test_validation_waits_for_the_validator_and_times_out_after_600_s() -> None:
    node = make_node(state=U.VALIDATION_REQUIRED, driver_version=NEW, unschedulable=True)
    assert not one(replace(node, validator_ready=None, time_in_state_s=1e6)).changed
    assert not one(replace(node, validator_ready=False, time_in_state_s=600)).changed
    assert one(replace(node, validator_ready=False, time_in_state_s=601)).next_state == U.FAILED
    assert one(replace(node, validator_ready=True)).next_state == U.UNCORDON_REQUIRED


def test_failed_node_recovers_once_its_driver_is_good() -> None:
    node = make_node(state=U.FAILED, unschedulable=True)
    assert not one(node).changed
    assert one(replace(node, driver_version=NEW)).next_state == U.UNCORDON_REQUIRED
    cordoned = replace(node, driver_version=NEW, initially_unschedulable=True)
    action = one(cordoned)
    assert action.next_state == U.DONE and action.set_initially_unschedulable is False


def test_without_pod_deletion_wait_goes_to_drain() -> None:
    node = make_node(state=U.WAIT_FOR_JOBS_REQUIRED, unschedulable=True)
    decision = decide_upgrades(UpgradeSnapshot((node,)), make_policy(), pod_deletion_enabled=False)
    assert decision.actions[0].next_state == U.DRAIN_REQUIRED


def test_a_state_change_asks_for_an_immediate_reconcile() -> None:
    decision = decide_upgrades(UpgradeSnapshot((make_node(),)), make_policy())
    assert decision.requeue_after_s == 0
    quiet = decide_upgrades(
        UpgradeSnapshot((make_node(driver_version=NEW, state=U.DONE),)), make_policy()
    )
    assert quiet.requeue_after_s == 120


def test_rollout_over_many_nodes_keeps_to_one_at_a_time() -> None:
    nodes = [SimNode(make_node(f"n{i}", pods=(gpu_pod(f"p{i}"),))) for i in range(6)]
    cluster = Cluster(nodes, make_policy(max_parallel=1, max_unavailable="50%"))
    cluster.run()
    assert cluster.states() == [U.DONE] * 6
    for decision in cluster.history:
        assert decision.num_in_progress <= 1
