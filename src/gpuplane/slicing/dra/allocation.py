"""``status.allocation`` of a ResourceClaim (``resource.k8s.io/v1`` AllocationResult).

``devices.results`` names, per allocated device, the request (``<request>`` or
``<request>/<subrequest>`` when a prioritized list picked a subrequest), the driver, pool and
device. ``devices.config`` copies the device class configs (``FromClass``) and the claim's
configs (``FromClaim``) that apply to the chosen requests, with ``requests`` cleared when a
config applies to all of them. ``nodeSelector`` restricts where the claim can be used: the
node's name for node-local devices, the slice's selector for network-attached ones, none when
every device is reachable from all nodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpuplane.slicing.dra.devices import DeviceID, DeviceToleration
from gpuplane.slicing.dra.node_selector import NodeSelector


@dataclass(frozen=True, slots=True)
class OpaqueDeviceConfiguration:
    """Driver-specific parameters (``opaque.driver``, ``opaque.parameters``), kept as given."""

    driver: str
    parameters: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DeviceRequestAllocationResult:
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()

    @property
    def device_id(self) -> DeviceID:
        return DeviceID(self.driver, self.pool, self.device)


@dataclass(frozen=True, slots=True)
class DeviceAllocationConfiguration:
    source: str  # FromClass or FromClaim
    requests: tuple[str, ...]
    opaque: OpaqueDeviceConfiguration | None = None


@dataclass(frozen=True, slots=True)
class DeviceAllocationResult:
    results: tuple[DeviceRequestAllocationResult, ...] = ()
    config: tuple[DeviceAllocationConfiguration, ...] = ()


@dataclass(frozen=True, slots=True)
class AllocationResult:
    devices: DeviceAllocationResult = field(default_factory=DeviceAllocationResult)
    node_selector: NodeSelector | None = None

    def device_ids(self) -> tuple[DeviceID, ...]:
        return tuple(r.device_id for r in self.devices.results)
