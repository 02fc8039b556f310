"""Dynamic Resource Allocation (``resource.k8s.io/v1``) as Kubernetes 1.36 and NVIDIA's DRA
driver do it: ResourceSlices, DeviceClasses, ResourceClaims and their templates as frozen values
with the API's field names; the API server's validation; the CEL subset selectors are written
in; the structured-parameters allocator; and the devices ``gpu.nvidia.com`` publishes for a
node's GPUs and MIG partitions.

Assumptions: every input is a complete, consistent view of the cluster at one instant
(``DraSnapshot``); decisions are pure functions of it. Modules:

- ``devices``, ``claims``, ``allocation``, ``node_selector``, ``quantity``, ``semver``: the objects.
- ``names``, ``validation``, ``slice_validation``, ``limits``: the API's rules and limits.
- ``cel/`` (``lexer``, ``parser``, ``ast_nodes``, ``evaluate``, ``semver``): selectors.
- ``pools``, ``requests``, ``counters``, ``constraints``, ``results``, ``allocator``,
  ``outcome``: allocation (``allocate``).
- ``nvidia``, ``node_slices``: what the NVIDIA driver publishes (``node_resource_slices``).
- ``pod_claims``, ``snapshot``: pods' claims and the scheduler's view (``DraSnapshot``).
"""

from __future__ import annotations

from gpuplane.slicing.dra.allocation import (
    AllocationResult,
    DeviceAllocationConfiguration,
    DeviceAllocationResult,
    DeviceRequestAllocationResult,
    OpaqueDeviceConfiguration,
)
from gpuplane.slicing.dra.allocator import allocate
from gpuplane.slicing.dra.claims import (
    DeviceClaim,
    DeviceClaimConfiguration,
    DeviceClass,
    DeviceClassSpec,
    DeviceConstraint,
    DeviceRequest,
    DeviceSubRequest,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
    ResourceClaimStatus,
    ResourceClaimTemplate,
)
from gpuplane.slicing.dra.devices import (
    CounterSet,
    Device,
    DeviceCounterConsumption,
    DeviceID,
    DeviceTaint,
    DeviceToleration,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)
from gpuplane.slicing.dra.node_selector import (
    DraNode,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
)
from gpuplane.slicing.dra.node_slices import node_resource_slices
from gpuplane.slicing.dra.nvidia import MigPlacement
from gpuplane.slicing.dra.outcome import AllocationOutcome, Features, OutcomeKind
from gpuplane.slicing.dra.pod_claims import PodClaims, PodResourceClaim, claim_from_template
from gpuplane.slicing.dra.snapshot import DraSnapshot, PendingAllocation, make_dra_snapshot

__all__ = [
    "AllocationOutcome",
    "AllocationResult",
    "CounterSet",
    "Device",
    "DeviceAllocationConfiguration",
    "DeviceAllocationResult",
    "DeviceClaim",
    "DeviceClaimConfiguration",
    "DeviceClass",
    "DeviceClassSpec",
    "DeviceConstraint",
    "DeviceCounterConsumption",
    "DeviceID",
    "DeviceRequest",
    "DeviceRequestAllocationResult",
    "DeviceSubRequest",
    "DeviceTaint",
    "DeviceToleration",
    "DraNode",
    "DraSnapshot",
    "ExactDeviceRequest",
    "Features",
    "MigPlacement",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "OpaqueDeviceConfiguration",
    "OutcomeKind",
    "PendingAllocation",
    "PodClaims",
    "PodResourceClaim",
    "ResourceClaim",
    "ResourceClaimConsumerReference",
    "ResourceClaimSpec",
    "ResourceClaimStatus",
    "ResourceClaimTemplate",
    "ResourcePool",
    "ResourceSlice",
    "ResourceSliceSpec",
    "allocate",
    "claim_from_template",
    "make_dra_snapshot",
    "node_resource_slices",
]
