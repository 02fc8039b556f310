"""Names, states and values of the driver upgrade controller (see :mod:`.upgrade`).

From NVIDIA/k8s-operator-libs ``pkg/upgrade/consts.go`` @ 1090aefa and ``base/util.go`` @ 110a5208,
with the driver name ``gpu`` that gpu-operator ``cmd/gpu-operator/main.go`` sets
(``upgrade.SetDriverName("gpu")``). The ``node-maintenance-required`` and
``post-maintenance-required`` states belong to the maintenance-operator (requestor) mode, which
the gpu-operator does not enable (``upgrade.StateOptions{}``), so they are not modelled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from gpuplane.api.pod_phase import PodPhase

UPGRADE_STATE_LABEL = "nvidia.com/gpu-driver-upgrade-state"
UPGRADE_SKIP_LABEL = "nvidia.com/gpu-driver-upgrade.skip"  # "true": never upgrade this node
SKIP_DRAIN_LABEL = "nvidia.com/gpu-driver-upgrade-drain.skip"  # on pods: drain leaves them
SAFE_LOAD_ANNOTATION = "nvidia.com/gpu-driver-upgrade.driver-wait-for-safe-load"
INITIAL_STATE_ANNOTATION = "nvidia.com/gpu-driver-upgrade.node-initial-state.unschedulable"
WAIT_START_ANNOTATION = "nvidia.com/gpu-driver-upgrade-wait-for-pod-completion-start-time"
VALIDATION_START_ANNOTATION = "nvidia.com/gpu-driver-upgrade-validation-start-time"
UPGRADE_REQUESTED_ANNOTATION = "nvidia.com/gpu-driver-upgrade-requested"
EVENT_REASON = "GPUDriverUpgrade"  # base/util.go GetEventReason: upper(driver) + "DriverUpgrade"
# gpu-operator main.go: WithValidationEnabled("app=nvidia-operator-validator").
VALIDATOR_POD_SELECTOR = "app=nvidia-operator-validator"
VALIDATION_TIMEOUT_S = 600  # base/validation_manager.go validationTimeoutSeconds
DRIVER_FAILING_RESTARTS = 10  # isDriverPodFailing: a not-ready container restarted > 10 times
# gpu-operator controllers/upgrade_controller.go: appended to drain.podSelector.
SKIP_DRAIN_SELECTOR = f"{SKIP_DRAIN_LABEL}!=true"


class UpgradeState(StrEnum):
    """Values of the ``nvidia.com/gpu-driver-upgrade-state`` node label ("" = no label)."""

    UNKNOWN = ""
    UPGRADE_REQUIRED = "upgrade-required"
    CORDON_REQUIRED = "cordon-required"
    WAIT_FOR_JOBS_REQUIRED = "wait-for-jobs-required"
    POD_DELETION_REQUIRED = "pod-deletion-required"
    DRAIN_REQUIRED = "drain-required"
    POD_RESTART_REQUIRED = "pod-restart-required"
    VALIDATION_REQUIRED = "validation-required"
    UNCORDON_REQUIRED = "uncordon-required"
    DONE = "upgrade-done"
    FAILED = "upgrade-failed"


U = UpgradeState
VALID_TRANSITIONS: dict[UpgradeState, frozenset[UpgradeState]] = {
    U.UNKNOWN: frozenset(
        {
            U.UPGRADE_REQUIRED,  # driver pod out of date, or upgrade requested by annotation
            U.DONE,  # driver pod already up to date: nothing to do
        }
    ),
    U.DONE: frozenset(
        {
            U.UPGRADE_REQUIRED,  # a new driver version (DaemonSet revision) appeared
            U.UNKNOWN,  # autoUpgrade turned off: gpu-operator removes the label
        }
    ),
    U.UPGRADE_REQUIRED: frozenset(
        {
            U.CORDON_REQUIRED,  # a slot within maxParallelUpgrades/maxUnavailable, or cordoned
            U.UNKNOWN,  # autoUpgrade turned off
        }
    ),
    U.CORDON_REQUIRED: frozenset(
        {
            U.WAIT_FOR_JOBS_REQUIRED,  # node cordoned
            U.UNKNOWN,  # autoUpgrade turned off
        }
    ),
    U.WAIT_FOR_JOBS_REQUIRED: frozenset(
        {
            U.POD_DELETION_REQUIRED,  # no selector, selected pods done, or wait timed out
            U.DRAIN_REQUIRED,  # same, when the consumer did not enable pod deletion
            U.UNKNOWN,  # autoUpgrade turned off
        }
    ),
    U.POD_DELETION_REQUIRED: frozenset(
        {
            U.POD_RESTART_REQUIRED,  # GPU pods gone (or there were none)
            U.DRAIN_REQUIRED,  # a GPU pod cannot be deleted or timed out, drain enabled
            U.FAILED,  # a GPU pod cannot be deleted or timed out, drain disabled
            U.UNKNOWN,  # autoUpgrade turned off
        }
    ),
    U.DRAIN_REQUIRED: frozenset(
        {
            U.POD_RESTART_REQUIRED,  # drained, or drain disabled in the policy
            U.FAILED,  # drain refused a pod or timed out
            U.UNKNOWN,  # autoUpgrade turned off
        }
    ),
    U.POD_RESTART_REQUIRED: frozenset(
        {
            U.VALIDATION_REQUIRED,  # new driver pod running and ready
            U.UNCORDON_REQUIRED,  # same, validation not enabled
            U.DONE,  # same, node was cordoned before the upgrade: leave it cordoned
            U.FAILED,  # new driver pod crash-looping (> 10 restarts)
            U.UNKNOWN,  # autoUpgrade turned off
        }
    ),
    U.VALIDATION_REQUIRED: frozenset(
        {
            U.UNCORDON_REQUIRED,  # validator pod ready
            U.DONE,  # validator ready, node was cordoned before the upgrade
            U.FAILED,  # validator not ready within 600 s
            U.UNKNOWN,  # autoUpgrade turned off
        }
    ),
    U.UNCORDON_REQUIRED: frozenset(
        {
            U.DONE,  # node uncordoned
            U.UNKNOWN,  # autoUpgrade turned off
        }
    ),
    U.FAILED: frozenset(
        {
            U.UNCORDON_REQUIRED,  # driver pod later came up in sync and ready
            U.DONE,  # same, node was cordoned before the upgrade
            U.UNKNOWN,  # autoUpgrade turned off
        }
    ),
}
# From every state, turning autoUpgrade off clears the label (removeNodeUpgradeStateLabels).


class IllegalUpgradeTransitionError(ValueError):
    """A move the upgrade table does not allow."""


def transition(current: UpgradeState, nxt: UpgradeState) -> UpgradeState:
    """``nxt`` if ``current -> nxt`` is in the table; raises IllegalUpgradeTransitionError."""
    if nxt not in VALID_TRANSITIONS[current]:
        allowed = ", ".join(repr(str(s)) for s in sorted(VALID_TRANSITIONS[current]))
        raise IllegalUpgradeTransitionError(
            f"driver upgrade cannot go {str(current)!r} -> {str(nxt)!r}; allowed: {allowed}"
        )
    return nxt


@dataclass(frozen=True, slots=True)
class UpgradePod:
    """A workload pod on the node (operator DaemonSet pods excluded)."""

    name: str
    namespace: str = "default"
    labels: Mapping[str, str] = field(default_factory=dict)
    phase: PodPhase = PodPhase.RUNNING
    uses_gpu: bool = True  # a container requests nvidia.com/gpu* or nvidia.com/mig-*
    owner_kind: str | None = "ReplicaSet"  # controller kind; None: a bare pod
    uses_empty_dir: bool = False
    terminating: bool = False  # deletion already requested

    @property
    def owned_by_job(self) -> bool:
        return self.owner_kind == "Job"

    @property
    def running_or_pending(self) -> bool:
        return self.phase in (PodPhase.RUNNING, PodPhase.PENDING)


@dataclass(frozen=True, slots=True)
class UpgradeNode:
    """One node with a driver pod, as the controller's BuildState sees it."""

    name: str
    state: UpgradeState = UpgradeState.UNKNOWN
    driver_version: str = ""  # version of the driver pod running now
    driver_pod_ready: bool = True  # phase Running and every container ready
    driver_pod_terminating: bool = False
    driver_restart_count: int = 0  # most restarts of a not-ready container
    unschedulable: bool = False  # spec.unschedulable (cordoned)
    ready: bool = True  # NodeReady condition
    initially_unschedulable: bool = False  # INITIAL_STATE_ANNOTATION present
    upgrade_requested: bool = False  # UPGRADE_REQUESTED_ANNOTATION == "true"
    skip_upgrade: bool = False  # UPGRADE_SKIP_LABEL == "true"
    validator_ready: bool | None = None  # None: no validator pod on the node
    pods: tuple[UpgradePod, ...] = ()
    time_in_state_s: float = 0.0  # stands in for the start-time annotations


@dataclass(frozen=True, slots=True)
class UpgradeSnapshot:
    nodes: tuple[UpgradeNode, ...]


@dataclass(frozen=True, slots=True)
class PodRef:
    namespace: str
    name: str


@dataclass(frozen=True, slots=True)
class NodeUpgradeAction:
    """What to do on one node; the caller applies the fields and then sets ``next_state``."""

    node: str
    state: UpgradeState
    next_state: UpgradeState
    cordon: bool = False
    uncordon: bool = False
    delete_pods: tuple[PodRef, ...] = ()  # pod-deletion: evict these GPU pods
    drain_pods: tuple[PodRef, ...] = ()  # drain: evict these pods
    restart_driver_pod: bool = False  # delete the driver pod; the DaemonSet makes a new one
    set_initially_unschedulable: bool | None = None  # add (True) / remove (False) annotation
    clear_upgrade_requested: bool = False
    event_type: str = "Normal"
    reason: str = EVENT_REASON
    message: str = ""

    @property
    def changed(self) -> bool:
        return self.next_state != self.state


@dataclass(frozen=True, slots=True)
class UpgradeDecision:
    actions: tuple[NodeUpgradeAction, ...]  # one per snapshot node, same order
    enabled: bool  # autoUpgrade on
    num_nodes: int
    num_in_progress: int  # before this decision
    num_unavailable: int  # before this decision (cordoned, not ready or cordon-required)
    max_unavailable: int
    upgrades_available: int
    requeue_after_s: float  # 0: a label changed, reconcile again at once; inf: never

    def for_node(self, name: str) -> NodeUpgradeAction:
        for action in self.actions:
            if action.node == name:
                return action
        raise KeyError(f"no node {name!r} in the decision")
