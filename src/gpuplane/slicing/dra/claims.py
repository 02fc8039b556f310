"""ResourceClaim, ResourceClaimTemplate and DeviceClass (``resource.k8s.io/v1``) as frozen values.

A claim asks for devices with ``spec.devices.requests``: each request is either ``exactly`` (one
device class, CEL selectors, ``allocationMode`` ``ExactCount`` with ``count`` or ``All``,
optional ``adminAccess`` and taint ``tolerations``) or ``firstAvailable`` (a prioritized list of
subrequests, of which the first that can be satisfied is used). ``constraints`` tie requests
together (``matchAttribute``: every device of the listed requests has the same value of the
attribute); ``config`` is opaque driver configuration the allocator only copies. The scheduler
writes ``status.allocation`` (see ``allocation.py``) and lists the pods using the claim in
``status.reservedFor``. A DeviceClass adds its own selectors and config to every request that
names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpuplane.slicing.dra import limits
from gpuplane.slicing.dra.allocation import AllocationResult, OpaqueDeviceConfiguration
from gpuplane.slicing.dra.devices import DeviceToleration


@dataclass(frozen=True, slots=True)
class ExactDeviceRequest:
    device_class_name: str
    selectors: tuple[str, ...] = ()  # CEL expressions (selectors[].cel.expression)
    allocation_mode: str = limits.EXACT_COUNT
    count: int = 1
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceSubRequest:
    """One entry of ``firstAvailable`` (no adminAccess: only exact requests may ask for it)."""

    name: str
    device_class_name: str
    selectors: tuple[str, ...] = ()
    allocation_mode: str = limits.EXACT_COUNT
    count: int = 1
    tolerations: tuple[DeviceToleration, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """Exactly one of ``exactly`` and ``first_available`` is set."""

    name: str
    exactly: ExactDeviceRequest | None = None
    first_available: tuple[DeviceSubRequest, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceConstraint:
    """``requests`` empty: the constraint applies to every request of the claim."""

    requests: tuple[str, ...] = ()
    match_attribute: str | None = None


@dataclass(frozen=True, slots=True)
class DeviceClaimConfiguration:
    requests: tuple[str, ...] = ()
    opaque: OpaqueDeviceConfiguration | None = None


@dataclass(frozen=True, slots=True)
class DeviceClaim:
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()
    config: tuple[DeviceClaimConfiguration, ...] = ()


@dataclass(frozen=True, slots=True)
class ResourceClaimSpec:
    devices: DeviceClaim = field(default_factory=DeviceClaim)


@dataclass(frozen=True, slots=True)
class ResourceClaimConsumerReference:
    """An entry of ``status.reservedFor`` (a pod, for claims the scheduler reserves)."""

    name: str
    uid: str
    resource: str = "pods"
    api_group: str = ""


@dataclass(frozen=True, slots=True)
class ResourceClaimStatus:
    allocation: AllocationResult | None = None
    reserved_for: tuple[ResourceClaimConsumerReference, ...] = ()


@dataclass(frozen=True, slots=True)
class ResourceClaim:
    name: str
    namespace: str = "default"
    uid: str = ""
    spec: ResourceClaimSpec = field(default_factory=ResourceClaimSpec)
    status: ResourceClaimStatus = field(default_factory=ResourceClaimStatus)
    # metadata.ownerReferences: the controlling pod's uid (claims made from a template).
    owner_pod_uid: str | None = None
    # metadata.deletionTimestamp is set.
    deleting: bool = False

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def is_reserved_for(self, pod_uid: str) -> bool:
        return any(ref.uid == pod_uid for ref in self.status.reserved_for)

    def can_be_reserved(self) -> bool:
        """resourceclaim.CanBeReserved: room left in ``reservedFor``."""
        return len(self.status.reserved_for) < limits.RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE


@dataclass(frozen=True, slots=True)
class ResourceClaimTemplate:
    name: str
    namespace: str = "default"
    spec: ResourceClaimSpec = field(default_factory=ResourceClaimSpec)
    labels: Mapping[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class DeviceClassSpec:
    selectors: tuple[str, ...] = ()
    config: tuple[OpaqueDeviceConfiguration, ...] = ()
    # DRAExtendedResource (beta in 1.36) is not modelled; the name is kept for output only.
    extended_resource_name: str | None = None


@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    spec: DeviceClassSpec = field(default_factory=DeviceClassSpec)
