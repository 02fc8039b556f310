"""The allocator's view of each request before the search (validateDeviceRequest).

For every request, or every subrequest of a ``firstAvailable`` list, it looks up the device
class, compiles the class's and the request's selectors and fixes how many devices are needed:
``count`` for ``ExactCount``, or for ``All`` every matching device of every pool the node sees
(an incomplete or invalid pool makes that an error, since "all" cannot be known then). The
claim's minimum device count (the smallest subrequest of each prioritized list) must fit in one
allocation result (32 devices).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from gpuplane.core.errors import InputError
from gpuplane.slicing.dra import limits
from gpuplane.slicing.dra.cel.evaluate import CelProgram, compile_selector
from gpuplane.slicing.dra.claims import (
    DeviceClass,
    DeviceRequest,
    DeviceSubRequest,
    ExactDeviceRequest,
    ResourceClaim,
)
from gpuplane.slicing.dra.devices import Device, DeviceID, DeviceToleration, ResourceSlice
from gpuplane.slicing.dra.outcome import AllocationError, Features
from gpuplane.slicing.dra.pools import Pool

RequestKey = tuple[int, int, int]  # (claim index, request index, subrequest index)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A device the node may allocate, where it was published."""

    id: DeviceID
    device: Device
    rslice: ResourceSlice
    pool: Pool


@dataclass(slots=True)
class RequestData:
    claim_index: int
    name: str  # the request's, or the subrequest's
    parent: str | None  # the request holding this subrequest
    device_class: DeviceClass
    class_selectors: tuple[CelProgram, ...]
    selectors: tuple[CelProgram, ...]
    mode: str
    num_devices: int
    admin_access: bool
    tolerations: tuple[DeviceToleration, ...]
    all_devices: list[Candidate] = field(default_factory=list)

    @property
    def full_name(self) -> str:
        return self.name if self.parent is None else f"{self.parent}/{self.name}"

    @property
    def request_name(self) -> str:
        return self.parent or self.name

    @property
    def subrequest_name(self) -> str | None:
        return None if self.parent is None else self.name


def _compile(expressions: tuple[str, ...], where: str) -> tuple[CelProgram, ...]:
    programs = []
    for i, expression in enumerate(expressions):
        try:
            programs.append(compile_selector(expression))
        except InputError as err:
            raise AllocationError(f"{where}: selector #{i}: CEL compile error: {err}") from None
    return tuple(programs)


def request_data(
    ci: int,
    claim: ResourceClaim,
    request: ExactDeviceRequest | DeviceSubRequest,
    name: str,
    parent: str | None,
    classes: Mapping[str, DeviceClass],
    features: Features,
) -> RequestData:
    full = name if parent is None else f"{parent}/{name}"
    where = f"claim {claim.key}, request {full}"
    admin = isinstance(request, ExactDeviceRequest) and request.admin_access is not None
    if admin and not features.admin_access:
        raise AllocationError(f"{where}: admin access is requested, but the feature is disabled")
    if not request.device_class_name:
        raise AllocationError(f"{where}: missing device class name (unsupported request type?)")
    device_class = classes.get(request.device_class_name)
    if device_class is None:
        name_ = request.device_class_name
        raise AllocationError(
            f"{where}: could not retrieve device class {name_}: "
            f'deviceclass.resource.k8s.io "{name_}" not found'
        )
    if request.allocation_mode not in (limits.EXACT_COUNT, limits.ALL):
        raise AllocationError(f"{where}: unsupported count mode {request.allocation_mode}")
    return RequestData(
        claim_index=ci,
        name=name,
        parent=parent,
        device_class=device_class,
        class_selectors=_compile(device_class.spec.selectors, f"class {device_class.name}"),
        selectors=_compile(request.selectors, f"claim {claim.key}"),
        mode=request.allocation_mode,
        num_devices=request.count if request.allocation_mode == limits.EXACT_COUNT else 0,
        admin_access=isinstance(request, ExactDeviceRequest) and bool(request.admin_access),
        tolerations=request.tolerations,
    )


def fill_all_devices(
    data: RequestData,
    claim: ResourceClaim,
    pools: tuple[Pool, ...],
    selectable: Callable[[RequestData, Candidate], bool],
) -> None:
    """``All``: every matching device of every pool, or an error when a pool is unusable."""
    where = f"claim {claim.key}, request {data.full_name}"
    for pool in pools:
        if pool.incomplete:
            raise AllocationError(
                f"{where}: asks for all devices, but resource pool {pool.pool_id} is currently "
                "being updated"
            )
        if pool.invalid:
            raise AllocationError(
                f"{where}: asks for all devices, but resource pool {pool.pool_id} is currently "
                "invalid"
            )
        for cand in candidates_of(pool):
            if selectable(data, cand):
                data.all_devices.append(cand)
    data.num_devices = len(data.all_devices)


def candidates_of(pool: Pool) -> list[Candidate]:
    return [
        Candidate(rslice.device_id(device), device, rslice, pool)
        for rslice in pool.slices
        for device in rslice.spec.devices
    ]


def prepare_claim(
    ci: int,
    claim: ResourceClaim,
    classes: Mapping[str, DeviceClass],
    features: Features,
) -> dict[RequestKey, RequestData]:
    """Request data of one claim (without the ``All`` devices, filled in by the caller)."""
    out: dict[RequestKey, RequestData] = {}
    for ri, request in enumerate(claim.spec.devices.requests):
        out.update(_prepare_request(ci, ri, claim, request, classes, features))
    return out


def _prepare_request(
    ci: int,
    ri: int,
    claim: ResourceClaim,
    request: DeviceRequest,
    classes: Mapping[str, DeviceClass],
    features: Features,
) -> dict[RequestKey, RequestData]:
    if request.first_available:
        if not features.prioritized_list:
            raise AllocationError(
                f"claim {claim.key}, request {request.name}: has subrequests, but the "
                "DRAPrioritizedList feature is disabled"
            )
        return {
            (ci, ri, si): request_data(ci, claim, sub, sub.name, request.name, classes, features)
            for si, sub in enumerate(request.first_available)
        }
    if request.exactly is None:
        raise AllocationError(f"claim {claim.key}, request {request.name}: unknown request type")
    return {
        (ci, ri, 0): request_data(ci, claim, request.exactly, request.name, None, classes, features)
    }
