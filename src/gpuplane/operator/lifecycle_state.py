"""States of a GPU node's operator lifecycle and the moves allowed between them.

See :mod:`gpuplane.operator.lifecycle` for what drives the moves. Moves into ``driver-upgrading``
come from the upgrade controller deleting the driver pod (pod-restart-required), into
``node-lost`` from a fault; every other move is a component finishing, failing or being retried.
"""

from __future__ import annotations

from enum import StrEnum


class GpuNodeState(StrEnum):
    JOINING = "joining"
    DRIVER_INSTALLING = "driver-installing"
    DRIVER_FAILED = "driver-failed"
    DRIVER_UPGRADING = "driver-upgrading"
    TOOLKIT_INSTALLING = "toolkit-installing"
    TOOLKIT_FAILED = "toolkit-failed"
    VALIDATING = "validating"
    VALIDATION_FAILED = "validation-failed"
    DEVICE_PLUGIN_STARTING = "device-plugin-starting"
    DEVICE_PLUGIN_FAILED = "device-plugin-failed"
    DCGM_STARTING = "dcgm-starting"
    DCGM_FAILED = "dcgm-failed"
    GFD_LABELING = "gfd-labeling"
    GFD_FAILED = "gfd-failed"
    READY = "ready"
    NODE_LOST = "node-lost"


S = GpuNodeState
VALID_TRANSITIONS: dict[GpuNodeState, frozenset[GpuNodeState]] = {
    S.JOINING: frozenset(
        {
            S.DRIVER_INSTALLING,  # operator pods scheduled; the driver pod starts first
            S.TOOLKIT_INSTALLING,  # driver.enabled=false: host driver, toolkit first
            S.VALIDATING,  # driver and toolkit both preinstalled on the host
            S.NODE_LOST,  # the node stops reporting before its pods start
        }
    ),
    S.DRIVER_INSTALLING: frozenset(
        {
            S.TOOLKIT_INSTALLING,  # kernel module loaded; toolkit's driver-validation passes
            S.VALIDATING,  # toolkit.enabled=false: straight to the validator
            S.DRIVER_FAILED,  # build or modprobe failed; the container exits
            S.DRIVER_UPGRADING,  # upgrade controller deleted the pod mid-install
            S.NODE_LOST,  # node lost while installing
        }
    ),
    S.DRIVER_FAILED: frozenset(
        {
            S.DRIVER_INSTALLING,  # kubelet restarts the container after back-off
            S.DRIVER_UPGRADING,  # upgrade controller replaced the crash-looping pod
            S.NODE_LOST,  # node lost while crash-looping
        }
    ),
    S.DRIVER_UPGRADING: frozenset(
        {
            S.VALIDATING,  # new driver loaded; the toolkit stays, validation re-runs
            S.DRIVER_FAILED,  # new driver failed to build or load
            S.NODE_LOST,  # node lost during the upgrade
        }
    ),
    S.TOOLKIT_INSTALLING: frozenset(
        {
            S.VALIDATING,  # runtime configured; validator's toolkit-validation passes
            S.TOOLKIT_FAILED,  # toolkit container exited
            S.DRIVER_UPGRADING,  # driver pod restarted by the upgrade controller
            S.NODE_LOST,  # node lost
        }
    ),
    S.TOOLKIT_FAILED: frozenset(
        {
            S.TOOLKIT_INSTALLING,  # retried after back-off
            S.DRIVER_UPGRADING,  # driver pod restarted by the upgrade controller
            S.NODE_LOST,  # node lost
        }
    ),
    S.VALIDATING: frozenset(
        {
            S.DEVICE_PLUGIN_STARTING,  # driver/toolkit/CUDA validation passed
            S.DCGM_STARTING,  # devicePlugin.enabled=false
            S.GFD_LABELING,  # device plugin and DCGM exporter disabled
            S.READY,  # nothing after the validator is enabled
            S.VALIDATION_FAILED,  # a validation init container exited non-zero
            S.DRIVER_UPGRADING,  # driver pod restarted by the upgrade controller
            S.NODE_LOST,  # node lost
        }
    ),
    S.VALIDATION_FAILED: frozenset(
        {
            S.VALIDATING,  # retried after back-off
            S.DRIVER_UPGRADING,  # driver pod restarted by the upgrade controller
            S.NODE_LOST,  # node lost
        }
    ),
    S.DEVICE_PLUGIN_STARTING: frozenset(
        {
            S.DCGM_STARTING,  # registered with the kubelet: nvidia.com/gpu advertised
            S.GFD_LABELING,  # ... and dcgmExporter.enabled=false
            S.READY,  # ... and neither DCGM exporter nor GFD enabled
            S.DEVICE_PLUGIN_FAILED,  # plugin exited (e.g. NVML init failed)
            S.DRIVER_UPGRADING,  # driver pod restarted by the upgrade controller
            S.NODE_LOST,  # node lost
        }
    ),
    S.DEVICE_PLUGIN_FAILED: frozenset(
        {
            S.DEVICE_PLUGIN_STARTING,  # retried after back-off
            S.DRIVER_UPGRADING,  # driver pod restarted by the upgrade controller
            S.NODE_LOST,  # node lost
        }
    ),
    S.DCGM_STARTING: frozenset(
        {
            S.GFD_LABELING,  # exporter serving metrics
            S.READY,  # ... and gfd.enabled=false
            S.DCGM_FAILED,  # exporter exited
            S.DRIVER_UPGRADING,  # driver pod restarted by the upgrade controller
            S.NODE_LOST,  # node lost
        }
    ),
    S.DCGM_FAILED: frozenset(
        {
            S.DCGM_STARTING,  # retried after back-off
            S.DRIVER_UPGRADING,  # driver pod restarted by the upgrade controller
            S.NODE_LOST,  # node lost
        }
    ),
    S.GFD_LABELING: frozenset(
        {
            S.READY,  # GFD wrote its labels; every enabled component is up
            S.GFD_FAILED,  # GFD exited
            S.DRIVER_UPGRADING,  # driver pod restarted by the upgrade controller
            S.NODE_LOST,  # node lost
        }
    ),
    S.GFD_FAILED: frozenset(
        {
            S.GFD_LABELING,  # retried after back-off
            S.DRIVER_UPGRADING,  # driver pod restarted by the upgrade controller
            S.NODE_LOST,  # node lost
        }
    ),
    S.READY: frozenset(
        {
            S.DRIVER_UPGRADING,  # upgrade controller restarts the driver pod (pod-restart)
            S.NODE_LOST,  # node lost
        }
    ),
    S.NODE_LOST: frozenset(
        {
            S.JOINING,  # node back (rebooted): every operator pod starts over
        }
    ),
}


class IllegalTransitionError(ValueError):
    """A move the lifecycle table does not allow (a bug in the caller, not a user mistake)."""


def transition(current: GpuNodeState, nxt: GpuNodeState) -> GpuNodeState:
    """``nxt`` if the table allows ``current -> nxt``; raises IllegalTransitionError otherwise."""
    if nxt not in VALID_TRANSITIONS[current]:
        allowed = ", ".join(sorted(VALID_TRANSITIONS[current]))
        raise IllegalTransitionError(
            f"GPU node lifecycle cannot go {current} -> {nxt}; from {current}: {allowed}"
        )
    return nxt
