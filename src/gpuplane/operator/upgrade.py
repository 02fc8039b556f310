"""The GPU driver upgrade controller, one reconcile per call, as k8s-operator-libs runs it.

Read: NVIDIA/k8s-operator-libs ``pkg/upgrade/upgrade_state.go`` @ 0105831a (ApplyState order),
``base/processor/processor.go`` @ 0105831a (every Process* step, GetUpgradesAvailable,
GetCurrentUnavailableNodes), ``inplace/upgrade_inplace.go`` @ 0105831a (upgrade-required ->
cordon-required, uncordon), ``base/pod_manager.go`` @ 019afc62 (wait-for-jobs, pod deletion),
``base/drainercordoner/drain_manager.go`` @ bbf898f4, ``base/validation_manager.go`` @ cbfede6f;
NVIDIA/gpu-operator ``controllers/upgrade_controller.go`` @ 06faaf0c and ``cmd/gpu-operator/
main.go`` @ 015a5685 (pod deletion with the GPU-pod filter and validation are enabled).

Pure translation of the real behaviour, with these stand-ins:

- The real controller runs pod deletion and drain in goroutines and moves the node when they end;
  here the decision names the pods to evict and the node moves on a later call once they are gone
  (the caller calls again when an evicted pod terminates) or when the timeout has passed.
- Start-time annotations (wait-for-completion, validation) are replaced by ``time_in_state_s``.
- "Driver pod in sync" (pod's controller-revision-hash == DaemonSet's) is ``driver_version ==
  policy.driver.version``.
- Safe driver load and orphaned driver pods are not modelled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from gpuplane.api.pod_phase import PodPhase
from gpuplane.operator.cluster_policy import ClusterPolicy, percent_or_int
from gpuplane.operator.selector import join_selectors, parse_label_selector
from gpuplane.operator.upgrade_state import (
    DRIVER_FAILING_RESTARTS,
    SKIP_DRAIN_SELECTOR,
    VALIDATION_TIMEOUT_S,
    NodeUpgradeAction,
    PodRef,
    UpgradeDecision,
    UpgradeNode,
    UpgradePod,
    UpgradeSnapshot,
    UpgradeState,
    transition,
)

U = UpgradeState
_NOT_IN_PROGRESS = (U.UNKNOWN, U.DONE, U.UPGRADE_REQUIRED)


@dataclass(frozen=True, slots=True)
class _Outcome:
    action: NodeUpgradeAction
    wait_s: float | None = None  # seconds until a timeout can move this node


def _stay(node: UpgradeNode, message: str = "", wait_s: float | None = None) -> _Outcome:
    return _Outcome(NodeUpgradeAction(node.name, node.state, node.state, message=message), wait_s)


def _move(
    node: UpgradeNode,
    nxt: UpgradeState,
    message: str = "",
    *,
    cordon: bool = False,
    uncordon: bool = False,
    set_initially_unschedulable: bool | None = None,
    clear_upgrade_requested: bool = False,
) -> _Outcome:
    transition(node.state, nxt)
    # ChangeNodeUpgradeState's own event text when nothing more specific is said.
    msg = message or f"Successfully updated node state label to {nxt}"
    action = NodeUpgradeAction(
        node.name,
        node.state,
        nxt,
        cordon=cordon,
        uncordon=uncordon,
        set_initially_unschedulable=set_initially_unschedulable,
        clear_upgrade_requested=clear_upgrade_requested,
        message=msg,
    )
    return _Outcome(action)


def _fail(node: UpgradeNode, nxt: UpgradeState, message: str) -> _Outcome:
    outcome = _move(node, nxt, message)
    return _Outcome(replace(outcome.action, event_type="Warning"))


def _in_sync(node: UpgradeNode, policy: ClusterPolicy) -> bool:
    return node.driver_version == policy.driver.version


def _in_sync_and_ready(node: UpgradeNode, policy: ClusterPolicy) -> bool:
    # isDriverPodInSync: revision matches, pod Running, every container ready.
    return _in_sync(node, policy) and node.driver_pod_ready and not node.driver_pod_terminating


def _timeout_wait(timeout_s: int | float, elapsed_s: float) -> float | None:
    """Seconds until ``elapsed > timeout`` holds (the Go code compares whole seconds with >)."""
    return None if timeout_s <= 0 else max(0.0, timeout_s - elapsed_s) + 1.0


def _uncordon_or_done(node: UpgradeNode, message: str = "") -> _Outcome:
    # updateNodeToUncordonOrDoneState: a node cordoned before the upgrade stays cordoned.
    if node.initially_unschedulable:
        return _move(node, U.DONE, message, set_initially_unschedulable=False)
    return _move(node, U.UNCORDON_REQUIRED, message)


def _done_or_unknown(node: UpgradeNode, policy: ClusterPolicy) -> _Outcome:
    # ProcessDoneOrUnknownNodes.
    if not _in_sync(node, policy) or node.upgrade_requested:
        mark = True if node.unschedulable else None
        return _move(node, U.UPGRADE_REQUIRED, set_initially_unschedulable=mark)
    if node.state == U.UNKNOWN:
        return _move(node, U.DONE)
    return _stay(node)


def _wait_for_jobs(node: UpgradeNode, policy: ClusterPolicy, pod_deletion: bool) -> _Outcome:
    # ProcessWaitForJobsRequiredNodes + PodManager.ScheduleCheckOnPodCompletion.
    nxt = U.POD_DELETION_REQUIRED if pod_deletion else U.DRAIN_REQUIRED
    spec = (
        policy.driver.upgrade_policy.wait_for_completion if policy.driver.upgrade_policy else None
    )
    if spec is None or spec.pod_selector == "":
        return _move(node, nxt)
    selector = parse_label_selector(spec.pod_selector)
    running = [p for p in node.pods if selector.matches(p.labels) and p.running_or_pending]
    if not running:
        return _move(node, nxt)
    if spec.timeout_s != 0 and node.time_in_state_s > spec.timeout_s:
        return _move(node, nxt, "Timeout exceeded for job completions")
    wait = _timeout_wait(spec.timeout_s, node.time_in_state_s)
    return _stay(node, f"waiting for {len(running)} pod(s) to complete", wait)


def _refusal(pod: UpgradePod, force: bool, delete_empty_dir: bool) -> str | None:
    """Why kubectl's drain helper will not delete ``pod`` (filters.go), or None."""
    finished = pod.phase in (PodPhase.SUCCEEDED, PodPhase.FAILED)
    if pod.owner_kind == "DaemonSet":
        return "DaemonSet-managed pod (ignored)"
    if pod.uses_empty_dir and not finished and not delete_empty_dir:
        return "cannot delete Pods with local storage (use deleteEmptyDir)"
    if pod.owner_kind is None and not finished and not force:
        return "cannot delete Pods that declare no controller (use force)"
    return None


def _refs(pods: list[UpgradePod]) -> tuple[PodRef, ...]:
    return tuple(PodRef(p.namespace, p.name) for p in pods if not p.terminating)


def _pod_deletion(node: UpgradeNode, policy: ClusterPolicy) -> _Outcome:
    # PodManager.SchedulePodEviction with gpu-operator's gpuPodSpecFilter.
    upgrade = policy.driver.upgrade_policy
    spec = upgrade.pod_deletion if upgrade else None
    drain_on = bool(upgrade and upgrade.drain and upgrade.drain.enable)
    fallback = U.DRAIN_REQUIRED if drain_on else U.FAILED
    force = spec.force if spec else False
    empty_dir = spec.delete_empty_dir if spec else False
    timeout = spec.timeout_s if spec else 300
    extra = parse_label_selector(spec.pod_selector if spec else "")
    wanted = [
        p
        for p in node.pods
        if p.running_or_pending and (p.uses_gpu or (not extra.is_empty and extra.matches(p.labels)))
    ]
    if not wanted:
        return _move(node, U.POD_RESTART_REQUIRED, "Deleted workload pods on the node")
    refused = [(p, why) for p in wanted if (why := _refusal(p, force, empty_dir))]
    if refused:
        pod, why = refused[0]
        msg = f"Cannot delete all required pods ({pod.namespace}/{pod.name}: {why})"
        return _fail(node, fallback, msg)
    if timeout != 0 and node.time_in_state_s > timeout:
        return _fail(node, fallback, "Failed to delete workload pods: timed out")
    wait = _timeout_wait(timeout, node.time_in_state_s)
    outcome = _stay(node, f"deleting {len(wanted)} GPU pod(s)", wait)
    return _Outcome(replace(outcome.action, delete_pods=_refs(wanted)), wait)


def _drain(node: UpgradeNode, policy: ClusterPolicy) -> _Outcome:
    # ProcessDrainNodes + DrainManager.ScheduleNodesDrain (kubectl drain helper).
    upgrade = policy.driver.upgrade_policy
    spec = upgrade.drain if upgrade else None
    if spec is None or not spec.enable:
        return _move(node, U.POD_RESTART_REQUIRED, "Node drain is disabled by policy")
    selector = parse_label_selector(join_selectors(spec.pod_selector, SKIP_DRAIN_SELECTOR))
    matching = [p for p in node.pods if selector.matches(p.labels)]
    evictable = [p for p in matching if p.owner_kind != "DaemonSet"]
    refused = [
        (p, why) for p in evictable if (why := _refusal(p, spec.force, spec.delete_empty_dir))
    ]
    if refused:
        pod, why = refused[0]
        return _fail(node, U.FAILED, f"Failed to drain the node, {pod.namespace}/{pod.name}: {why}")
    if not evictable:
        return _move(node, U.POD_RESTART_REQUIRED, "Successfully drained the node")
    if spec.timeout_s != 0 and node.time_in_state_s > spec.timeout_s:
        return _fail(node, U.FAILED, "Failed to drain the node, global timeout reached")
    wait = _timeout_wait(spec.timeout_s, node.time_in_state_s)
    outcome = _stay(node, f"draining {len(evictable)} pod(s)", wait)
    return _Outcome(replace(outcome.action, drain_pods=_refs(evictable)), wait)


def _pod_restart(node: UpgradeNode, policy: ClusterPolicy, validation: bool) -> _Outcome:
    # ProcessPodRestartNodes.
    if not _in_sync(node, policy):
        if node.driver_pod_terminating:
            return _stay(node, "driver pod is terminating")
        outcome = _stay(node, "restarting the driver pod")
        return _Outcome(replace(outcome.action, restart_driver_pod=True))
    if _in_sync_and_ready(node, policy):
        return _move(node, U.VALIDATION_REQUIRED) if validation else _uncordon_or_done(node)
    if not node.driver_pod_ready and node.driver_restart_count > DRIVER_FAILING_RESTARTS:
        return _fail(node, U.FAILED, "Driver pod is failing on the node with repeated restarts")
    return _stay(node, "waiting for the new driver pod to be ready")


def _validation(node: UpgradeNode) -> _Outcome:
    # ProcessValidationRequiredNodes + ValidationManager.Validate.
    if node.validator_ready is None:
        return _stay(node, "No validation pods found on the node")
    if node.validator_ready:
        return _uncordon_or_done(node)
    if node.time_in_state_s > VALIDATION_TIMEOUT_S:
        return _fail(node, U.FAILED, "Timeout exceeded for validation")
    wait = _timeout_wait(VALIDATION_TIMEOUT_S, node.time_in_state_s)
    return _stay(node, "validations not complete", wait)


def _failed(node: UpgradeNode, policy: ClusterPolicy) -> _Outcome:
    # ProcessUpgradeFailedNodes: recovers by itself once the driver pod is good.
    if _in_sync_and_ready(node, policy):
        return _uncordon_or_done(node)
    return _stay(node)


def upgrades_available(
    nodes: tuple[UpgradeNode, ...], max_parallel: int, max_unavailable: int
) -> int:
    """GetUpgradesAvailable: new upgrades allowed now by both limits (may be <= 0)."""
    in_progress = sum(1 for n in nodes if n.state not in _NOT_IN_PROGRESS)
    required = sum(1 for n in nodes if n.state == U.UPGRADE_REQUIRED)
    available = required if max_parallel == 0 else max_parallel - in_progress
    unavailable = unavailable_count(nodes)
    available = min(available, max_unavailable)
    if unavailable >= max_unavailable:
        return 0
    if max_unavailable < len(nodes) and unavailable + available > max_unavailable:
        return max_unavailable - unavailable
    return available


def unavailable_count(nodes: tuple[UpgradeNode, ...]) -> int:
    """GetCurrentUnavailableNodes (cordoned or NotReady) plus nodes about to be cordoned."""
    down = sum(1 for n in nodes if n.unschedulable or not n.ready)
    return down + sum(1 for n in nodes if n.state == U.CORDON_REQUIRED)


def _disabled(snapshot: UpgradeSnapshot) -> UpgradeDecision:
    # gpu-operator removeNodeUpgradeStateLabels: labels go, cordons stay as they are.
    actions = tuple(
        NodeUpgradeAction(n.name, n.state, transition(n.state, U.UNKNOWN), message="label removed")
        if n.state != U.UNKNOWN
        else NodeUpgradeAction(n.name, n.state, n.state)
        for n in snapshot.nodes
    )
    nodes = snapshot.nodes
    return UpgradeDecision(actions, False, len(nodes), 0, unavailable_count(nodes), 0, 0, math.inf)


def decide_upgrades(
    snapshot: UpgradeSnapshot,
    policy: ClusterPolicy,
    *,
    pod_deletion_enabled: bool = True,
    validation_enabled: bool = True,
    requeue_s: float = 120.0,
) -> UpgradeDecision:
    """One ApplyState over ``snapshot``: each node moves at most one state.

    ``pod_deletion_enabled``/``validation_enabled`` mirror the library's WithPodDeletionEnabled/
    WithValidationEnabled, both on in the gpu-operator. ``requeue_s``: the periodic requeue.
    """
    upgrade = policy.driver.upgrade_policy
    if upgrade is None or not policy.auto_upgrade:
        return _disabled(snapshot)
    nodes = snapshot.nodes
    max_unavailable = percent_or_int(upgrade.max_unavailable, len(nodes))
    budget = upgrades_available(nodes, upgrade.max_parallel_upgrades, max_unavailable)
    first_budget = budget
    outcomes: list[_Outcome] = []
    for node in nodes:
        if node.state == U.UPGRADE_REQUIRED:
            outcome, budget = _upgrade_required(node, budget)
        else:
            outcome = _process(node, policy, pod_deletion_enabled, validation_enabled)
        outcomes.append(outcome)
    actions = tuple(o.action for o in outcomes)
    waits = [o.wait_s for o in outcomes if o.wait_s is not None]
    requeue = 0.0 if any(a.changed for a in actions) else min([requeue_s, *waits])
    in_progress = sum(1 for n in nodes if n.state not in _NOT_IN_PROGRESS)
    return UpgradeDecision(
        actions=actions,
        enabled=True,
        num_nodes=len(nodes),
        num_in_progress=in_progress,
        num_unavailable=unavailable_count(nodes),
        max_unavailable=max_unavailable,
        upgrades_available=first_budget,
        requeue_after_s=requeue,
    )


def _upgrade_required(node: UpgradeNode, budget: int) -> tuple[_Outcome, int]:
    # inplace ProcessUpgradeRequiredNodes.
    clear = node.upgrade_requested
    if node.skip_upgrade:
        outcome = _stay(node, "Node is marked for skipping upgrades")
    elif budget <= 0 and not node.unschedulable:
        outcome = _stay(node, "Node upgrade limit reached, pausing further upgrades")
    else:
        # An already cordoned node goes ahead even without a slot; the slot count still drops.
        return _move(node, U.CORDON_REQUIRED, clear_upgrade_requested=clear), budget - 1
    return _Outcome(replace(outcome.action, clear_upgrade_requested=clear)), budget


def _process(
    node: UpgradeNode, policy: ClusterPolicy, pod_deletion: bool, validation: bool
) -> _Outcome:
    state = node.state
    if state in (U.UNKNOWN, U.DONE):
        return _done_or_unknown(node, policy)
    if state == U.CORDON_REQUIRED:
        return _move(node, U.WAIT_FOR_JOBS_REQUIRED, cordon=True)
    if state == U.WAIT_FOR_JOBS_REQUIRED:
        return _wait_for_jobs(node, policy, pod_deletion)
    if state == U.POD_DELETION_REQUIRED:
        if not pod_deletion:
            return _move(node, U.DRAIN_REQUIRED)
        return _pod_deletion(node, policy)
    if state == U.DRAIN_REQUIRED:
        return _drain(node, policy)
    if state == U.POD_RESTART_REQUIRED:
        return _pod_restart(node, policy, validation)
    if state == U.VALIDATION_REQUIRED:
        return _validation(node)
    if state == U.UNCORDON_REQUIRED:
        return _move(node, U.DONE, uncordon=True)
    return _failed(node, policy)
