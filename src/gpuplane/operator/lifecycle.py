"""A GPU node from joining the cluster to serving GPU pods, as the GPU Operator brings it up.

In the real operator every component is a DaemonSet whose pod lands on the node at once; the order
comes from init containers that wait for the previous step's validation file under
``/run/nvidia/validations`` (the toolkit pod's ``driver-validation``, the device plugin's
``toolkit-validation``, ...; gpu-operator ``assets/state-*``). The twin runs them one after the
other in that order: driver -> container toolkit -> operator validator -> device plugin -> DCGM
exporter -> GFD. That serialises DCGM exporter and GFD, which really start alongside the device
plugin; scheduling is unaffected because GPUs are advertised at the device plugin step.

What gates GPU pods: the device plugin registering with the kubelet (device plugin API,
``Register`` then ``ListAndWatch``), after which the kubelet reports ``nvidia.com/gpu`` in the
node's capacity/allocatable. Until then no pod asking for ``nvidia.com/gpu`` fits the node.

A component that is disabled in the ClusterPolicy is skipped: ``driver.enabled=false`` means a
driver preinstalled on the host, ``toolkit.enabled=false`` a toolkit on the host. With
``devicePlugin.enabled=false`` nothing advertises ``nvidia.com/gpu`` (the setup used with the
NVIDIA DRA driver); the node is then GPU-ready (``gpu_schedulable``) once validated. A failed
attempt goes to that component's failed state and is retried after the kubelet's crash-loop
back-off (:class:`~gpuplane.operator.settings.BackoffSettings`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

import numpy as np

from gpuplane.operator.cluster_policy import ClusterPolicy
from gpuplane.operator.lifecycle_state import (
    VALID_TRANSITIONS,
    GpuNodeState,
    IllegalTransitionError,
    transition,
)
from gpuplane.operator.settings import OperatorSettings

__all__ = [
    "STAGES",
    "VALID_TRANSITIONS",
    "GpuNodeState",
    "IllegalTransitionError",
    "LifecycleStep",
    "lose_node",
    "next_step",
    "recover_node",
    "restart_driver",
    "stage_enabled",
    "transition",
]


S = GpuNodeState


@dataclass(frozen=True, slots=True)
class LifecycleStep:
    """What happens next: after ``delay_s`` the node is in ``next_state``.

    Flags: ``True``/``False`` become so at that moment; ``None`` leaves them as they are.
    """

    next_state: GpuNodeState
    delay_s: float
    reason: str
    message: str
    event_type: str = "Normal"  # Normal | Warning, as a Kubernetes Event
    component: str | None = None
    failed: bool = False
    advertise_gpus: bool | None = None  # nvidia.com/gpu in node allocatable
    gpu_schedulable: bool | None = None  # GPU pods may be placed on the node
    export_metrics: bool | None = None  # DCGM exporter serving DCGM_FI_* metrics
    apply_gfd_labels: bool | None = None  # nvidia.com/gpu.* labels from GFD present


@dataclass(frozen=True, slots=True)
class _Stage:
    component: str  # OperatorSettings field
    running: GpuNodeState
    failed: GpuNodeState
    daemonset: str
    container: str


# Names of the DaemonSets and containers as gpu-operator's assets/state-* manifests define them.
STAGES: tuple[_Stage, ...] = (
    _Stage(
        "driver",
        S.DRIVER_INSTALLING,
        S.DRIVER_FAILED,
        "nvidia-driver-daemonset",
        "nvidia-driver-ctr",
    ),
    _Stage(
        "toolkit",
        S.TOOLKIT_INSTALLING,
        S.TOOLKIT_FAILED,
        "nvidia-container-toolkit-daemonset",
        "nvidia-container-toolkit-ctr",
    ),
    _Stage(
        "validator",
        S.VALIDATING,
        S.VALIDATION_FAILED,
        "nvidia-operator-validator",
        "nvidia-operator-validator",
    ),
    _Stage(
        "device_plugin",
        S.DEVICE_PLUGIN_STARTING,
        S.DEVICE_PLUGIN_FAILED,
        "nvidia-device-plugin-daemonset",
        "nvidia-device-plugin",
    ),
    _Stage(
        "dcgm_exporter",
        S.DCGM_STARTING,
        S.DCGM_FAILED,
        "nvidia-dcgm-exporter",
        "nvidia-dcgm-exporter",
    ),
    _Stage("gfd", S.GFD_LABELING, S.GFD_FAILED, "gpu-feature-discovery", "gpu-feature-discovery"),
)
_BY_RUNNING = {s.running: i for i, s in enumerate(STAGES)}
_BY_FAILED = {s.failed: i for i, s in enumerate(STAGES)}


def stage_enabled(component: str, policy: ClusterPolicy) -> bool:
    """Whether the operator deploys ``component`` (the validator always runs)."""
    return {
        "driver": policy.driver.enabled,
        "toolkit": policy.toolkit.enabled,
        "validator": True,
        "device_plugin": policy.device_plugin.enabled,
        "dcgm_exporter": policy.dcgm_exporter.enabled,
        "gfd": policy.gfd.enabled,
    }[component]


def _next_enabled(after: int, policy: ClusterPolicy) -> GpuNodeState:
    for stage in STAGES[after + 1 :]:
        if stage_enabled(stage.component, policy):
            return stage.running
    return S.READY


class _Flags(TypedDict, total=False):
    advertise_gpus: bool
    gpu_schedulable: bool
    export_metrics: bool
    apply_gfd_labels: bool


def _success_flags(stage: _Stage, policy: ClusterPolicy) -> _Flags:
    if stage.component == "device_plugin":
        return {"advertise_gpus": True, "gpu_schedulable": True}
    if stage.component == "validator" and not policy.device_plugin.enabled:
        # No operator device plugin (e.g. DRA driver): the validated GPUs are usable by other means.
        return {"gpu_schedulable": True}
    if stage.component == "dcgm_exporter":
        return {"export_metrics": True}
    if stage.component == "gfd":
        return {"apply_gfd_labels": True}
    return {}


def _attempt(
    index: int,
    policy: ClusterPolicy,
    settings: OperatorSettings,
    rng: np.random.Generator,
    *,
    on_success: GpuNodeState | None = None,
) -> LifecycleStep:
    """The running stage ``index`` finishing: up after its duration, or failed."""
    stage = STAGES[index]
    timing_name = stage.component
    if stage.component == "driver" and policy.driver.use_precompiled:
        timing_name = "driver_precompiled"
    timing = settings.timing(timing_name)
    delay = timing.sample_s(rng)
    if timing.fails(rng):
        return LifecycleStep(
            next_state=stage.failed,
            delay_s=delay,
            reason="BackOff",
            message=f"Back-off restarting failed container {stage.container} in pod "
            f"{stage.daemonset} on the node",
            event_type="Warning",
            component=stage.component,
            failed=True,
        )
    nxt = on_success if on_success is not None else _next_enabled(index, policy)
    return LifecycleStep(
        next_state=nxt,
        delay_s=delay,
        reason="Started",
        message=f"{stage.container} ({stage.daemonset}) is up",
        component=stage.component,
        **_success_flags(stage, policy),
    )


def next_step(
    state: GpuNodeState,
    policy: ClusterPolicy,
    settings: OperatorSettings,
    rng: np.random.Generator,
    *,
    failures: int = 0,
) -> LifecycleStep | None:
    """The next thing that happens to a node in ``state``; None when only an outside event can
    move it (``ready``, ``node-lost``).

    ``failures`` is the number of consecutive failed attempts of the component in a failed state
    (1 after the first failure); it sets the back-off. Draws from ``rng`` only for running states.
    """
    if state == S.JOINING:
        timing = settings.timing("node_join")
        first = _next_enabled(-1, policy)
        return LifecycleStep(
            next_state=first,
            delay_s=timing.sample_s(rng),
            reason="Scheduled",
            message=f"operator DaemonSet pods scheduled to the node; next: {first}",
        )
    if state == S.DRIVER_UPGRADING:
        # k8s-driver-manager evicts the other operator pods, the new driver loads, then the
        # validator and the evicted components come back; the toolkit pod is left running.
        return _attempt(0, policy, settings, rng, on_success=_next_enabled(1, policy))
    if state in _BY_RUNNING:
        return _attempt(_BY_RUNNING[state], policy, settings, rng)
    if state in _BY_FAILED:
        stage = STAGES[_BY_FAILED[state]]
        return LifecycleStep(
            next_state=stage.running,
            delay_s=settings.backoff.delay_s(max(failures, 1)),
            reason="Pulled",
            message=f"restarting container {stage.container} after back-off",
            component=stage.component,
        )
    return None


def restart_driver(state: GpuNodeState) -> LifecycleStep:
    """The upgrade controller deleted the driver pod (pod-restart-required): GPUs go away now.

    k8s-driver-manager (the driver pod's init container) evicts the device plugin, GFD, DCGM
    exporter and validator before unloading the module; GFD's labels stay on the node.
    """
    nxt = transition(state, S.DRIVER_UPGRADING)
    return LifecycleStep(
        next_state=nxt,
        delay_s=0.0,
        reason="Killing",
        message="Stopping container nvidia-driver-ctr for the driver upgrade",
        component="driver",
        advertise_gpus=False,
        gpu_schedulable=False,
        export_metrics=False,
    )


def lose_node(state: GpuNodeState) -> LifecycleStep:
    """The node stopped reporting (fault ``node-lost``)."""
    nxt = transition(state, S.NODE_LOST)
    return LifecycleStep(
        next_state=nxt,
        delay_s=0.0,
        reason="NodeNotReady",
        message="Node is not ready: kubelet stopped posting node status",
        event_type="Warning",
        advertise_gpus=False,
        gpu_schedulable=False,
        export_metrics=False,
    )


def recover_node(state: GpuNodeState) -> LifecycleStep:
    """The lost node is back; it rebooted, so the operator's pods start from the beginning."""
    nxt = transition(state, S.JOINING)
    return LifecycleStep(
        next_state=nxt,
        delay_s=0.0,
        reason="NodeReady",
        message="Node is ready again; GPU Operator components start over",
    )
