"""What the allocator answers, and the feature gates it follows.

Kubernetes 1.36 defaults: ``DRAPrioritizedList`` and ``DRAAdminAccess`` are GA,
``DRAPartitionableDevices`` and ``DRADeviceTaints`` beta and on. Each can be turned off to see
what an older or differently configured cluster would do: a claim using a disabled feature is an
error (prioritized list, admin access), a device using one is not allocatable (counters) or its
taints are ignored (taints).

Outcomes mirror the three ways ``Allocator.Allocate`` returns: results for every claim; no
solution on this node (the plugin reports "cannot allocate all claims"); an error limited to
this node (``ErrFailedAllocationOnNode``: invalid pools were seen and nothing else fitted); or an
error that aborts scheduling the pod (a CEL runtime error, a missing class, too many devices, an
``All`` request meeting an incomplete pool).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from gpuplane.slicing.dra.allocation import AllocationResult


@dataclass(frozen=True, slots=True)
class Features:
    prioritized_list: bool = True
    admin_access: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True


class OutcomeKind(StrEnum):
    ALLOCATED = "Allocated"
    NO_SOLUTION = "NoSolution"
    NODE_ERROR = "NodeError"
    ERROR = "Error"


@dataclass(frozen=True, slots=True)
class AllocationOutcome:
    kind: OutcomeKind
    # One result per claim, in the order the claims were given (only when ALLOCATED).
    results: tuple[AllocationResult, ...] = ()
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.kind is OutcomeKind.ALLOCATED


class AllocationError(Exception):
    """Allocation cannot proceed for this pod (the message is the allocator's)."""


INVALID_POOLS = "invalid resource pools were encountered"
NO_SUCH_KEY_HINT = (
    ". Consider using CEL optional chaining (?), has() macro, or orValue() for optional fields"
)
