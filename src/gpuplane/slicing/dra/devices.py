"""ResourceSlice and its parts (``resource.k8s.io/v1``), as frozen values with the API's names.

A driver publishes its devices in pools; a pool may span several ResourceSlices, all carrying the
pool's ``generation`` and ``resourceSliceCount``. A device is identified by (driver, pool,
device name). Each device has typed attributes (exactly one of string, int, bool or semver
version per attribute) and quantity capacities; a partitionable device names the shared
counters it consumes (``consumesCounters``) from a counter set that another slice of the same
pool publishes (``sharedCounters``; one slice carries either devices or counter sets, never
both). Node access is set per slice (``nodeName``, ``nodeSelector``, ``allNodes``) or, with
``perDeviceNodeSelection``, per device.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpuplane.slicing.dra import limits
from gpuplane.slicing.dra.cel.semver import Version
from gpuplane.slicing.dra.node_selector import NodeSelector
from gpuplane.slicing.dra.quantity import DeviceQuantity

# One attribute value: the API's DeviceAttribute has exactly one of string/int/bool/version set.
AttributeValue = str | int | bool | Version
TOLERATION_OPERATORS = ("Exists", "Equal")


def attribute_kind(value: AttributeValue) -> str:
    """The DeviceAttribute field that holds ``value`` (bool is checked before int)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, Version):
        return "version"
    return "string"


def attribute_to_api(value: AttributeValue) -> dict[str, object]:
    """``{"string": ...}``, ``{"int": ...}``, ``{"bool": ...}`` or ``{"version": ...}``."""
    kind = attribute_kind(value)
    return {kind: str(value) if kind == "version" else value}


@dataclass(frozen=True, slots=True, order=True)
class DeviceID:
    """(driver, pool, device): the unique name of a device in the cluster."""

    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


@dataclass(frozen=True, slots=True)
class DeviceTaint:
    key: str
    value: str = ""
    effect: str = limits.TAINT_NO_SCHEDULE


@dataclass(frozen=True, slots=True)
class DeviceToleration:
    """Tolerates a device taint (the same matching rules as pod tolerations of node taints)."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: DeviceTaint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        # Equal; an empty key with Equal is rejected by validation.
        return self.value == taint.value


@dataclass(frozen=True, slots=True)
class CounterSet:
    """A named set of counters a pool offers to its partitionable devices."""

    name: str
    counters: Mapping[str, DeviceQuantity]


@dataclass(frozen=True, slots=True)
class DeviceCounterConsumption:
    """What allocating the device takes from one counter set of its pool."""

    counter_set: str
    counters: Mapping[str, DeviceQuantity]


@dataclass(frozen=True, slots=True)
class Device:
    name: str
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)
    capacity: Mapping[str, DeviceQuantity] = field(default_factory=dict)
    consumes_counters: tuple[DeviceCounterConsumption, ...] = ()
    # Only with the slice's perDeviceNodeSelection: exactly one of these.
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    taints: tuple[DeviceTaint, ...] = ()


@dataclass(frozen=True, slots=True)
class ResourcePool:
    name: str
    generation: int = 0
    resource_slice_count: int = 1


@dataclass(frozen=True, slots=True)
class ResourceSliceSpec:
    driver: str
    pool: ResourcePool
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool = False
    per_device_node_selection: bool = False
    devices: tuple[Device, ...] = ()
    shared_counters: tuple[CounterSet, ...] = ()


@dataclass(frozen=True, slots=True)
class ResourceSlice:
    name: str
    spec: ResourceSliceSpec

    def device_id(self, device: Device) -> DeviceID:
        return DeviceID(self.spec.driver, self.spec.pool.name, device.name)


def lookup_attribute(device: Device, driver: str, name: str) -> AttributeValue | None:
    """A fully qualified attribute of ``device`` (the allocator's lookupAttribute): the name as
    given, else, when its domain is the device's driver, the bare id the driver published."""
    if name in device.attributes:
        return device.attributes[name]
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(ident)
