"""What a scheduling decision reads about DRA: every ResourceSlice, DeviceClass and
ResourceClaim of the cluster, each pod's claim entries, and the allocations in flight.

The scheduler's own ``PodInfo`` does not carry ``spec.resourceClaims``, so the pods' entries
travel here, keyed by pod uid. ``pending`` holds allocations that the scheduler reserved but has
not written to the claim yet (kube-scheduler keeps them in its in-flight map and assume cache;
in gpuplane, pods waiting at Permit): their devices count as taken and their claims cannot be
allocated again by another pod until they are written or dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from gpuplane.slicing.dra.allocation import AllocationResult
from gpuplane.slicing.dra.claims import DeviceClass, ResourceClaim
from gpuplane.slicing.dra.devices import DeviceID, ResourceSlice
from gpuplane.slicing.dra.outcome import Features
from gpuplane.slicing.dra.pod_claims import PodClaims


@dataclass(frozen=True, slots=True)
class PendingAllocation:
    """An allocation reserved for ``pod_uid`` and not yet written to its claim."""

    pod_uid: str
    allocation: AllocationResult


@dataclass(frozen=True, slots=True)
class DraSnapshot:
    slices: tuple[ResourceSlice, ...] = ()
    classes: Mapping[str, DeviceClass] = field(default_factory=dict)
    claims: Mapping[str, ResourceClaim] = field(default_factory=dict)  # "namespace/name"
    pods: Mapping[str, PodClaims] = field(default_factory=dict)  # pod uid
    pending: Mapping[str, PendingAllocation] = field(default_factory=dict)  # claim key
    features: Features = field(default_factory=Features)

    def allocated_devices(self) -> frozenset[DeviceID]:
        """Devices held by claims (ListAllAllocatedDevices): allocated or in flight, except
        results with admin access, which never make a device unavailable."""
        allocations = [c.status.allocation for c in self.claims.values()]
        in_flight = [p.allocation for p in self.pending.values()]
        return allocated_in([a for a in allocations if a is not None], in_flight)


def allocated_in(*groups: Iterable[AllocationResult]) -> frozenset[DeviceID]:
    return frozenset(
        r.device_id
        for group in groups
        for allocation in group
        for r in allocation.devices.results
        if not r.admin_access
    )


def make_dra_snapshot(
    *,
    slices: Iterable[ResourceSlice] = (),
    classes: Iterable[DeviceClass] = (),
    claims: Iterable[ResourceClaim] = (),
    pods: Mapping[str, PodClaims] | None = None,
    pending: Mapping[str, PendingAllocation] | None = None,
    features: Features | None = None,
) -> DraSnapshot:
    """A snapshot from lists of objects (duplicate names are a ValueError)."""
    class_map: dict[str, DeviceClass] = {}
    for device_class in classes:
        if device_class.name in class_map:
            raise ValueError(f"device class {device_class.name} given twice")
        class_map[device_class.name] = device_class
    claim_map: dict[str, ResourceClaim] = {}
    for claim in claims:
        if claim.key in claim_map:
            raise ValueError(f"resource claim {claim.key} given twice")
        claim_map[claim.key] = claim
    return DraSnapshot(
        slices=tuple(slices),
        classes=class_map,
        claims=claim_map,
        pods=dict(pods or {}),
        pending=dict(pending or {}),
        features=features or Features(),
    )
