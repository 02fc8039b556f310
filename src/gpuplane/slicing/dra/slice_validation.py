"""ResourceSlice validation as the API server does it (``validateResourceSliceSpec``): the
first problem raises an InputError at the field's path, in the API server's words."""

from __future__ import annotations

from collections.abc import Mapping

from gpuplane.slicing.dra import limits
from gpuplane.slicing.dra import names as n
from gpuplane.slicing.dra.devices import (
    CounterSet,
    Device,
    DeviceCounterConsumption,
    DeviceTaint,
    ResourceSlice,
    ResourceSliceSpec,
)
from gpuplane.slicing.dra.node_selector import NodeSelector
from gpuplane.slicing.dra.quantity import DeviceQuantity
from gpuplane.slicing.dra.validation import TAINT_EFFECTS, each, unique

NODE_SELECTION = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection`"
DEVICE_NODE_SELECTION = (
    "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
    "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"
)


def validate_slice(rslice: ResourceSlice) -> None:
    n.check_subdomain("metadata.name", rslice.name)
    spec = rslice.spec
    n.check_driver_name("spec.driver", spec.driver)
    n.check_pool_name("spec.pool.name", spec.pool.name)
    if spec.pool.resource_slice_count <= 0:
        raise n.invalid(
            "spec.pool.resourceSliceCount",
            spec.pool.resource_slice_count,
            "must be greater than zero",
        )
    if spec.pool.generation < 0:
        raise n.invalid(
            "spec.pool.generation", spec.pool.generation, "must be greater than or equal to zero"
        )
    _check_node_selection(spec)
    if spec.shared_counters and spec.devices:
        raise n.invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed")
    advanced = any(d.taints or d.consumes_counters for d in spec.devices)
    maximum = (
        limits.RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES
        if advanced
        else limits.RESOURCE_SLICE_MAX_DEVICES
    )
    per_device = spec.per_device_node_selection
    each(spec.devices, maximum, "spec.devices", lambda d, p: _check_device(d, p, per_device))
    unique([d.name for d in spec.devices], "spec.devices")
    each(
        spec.shared_counters,
        limits.RESOURCE_SLICE_MAX_COUNTER_SETS,
        "spec.sharedCounters",
        _check_counter_set,
    )
    unique([c.name for c in spec.shared_counters], "spec.sharedCounters")


def _check_node_selection(spec: ResourceSliceSpec) -> None:
    chosen = [
        name
        for name, on in (
            ("`nodeName`", bool(spec.node_name)),
            ("`nodeSelector`", spec.node_selector is not None),
            ("`allNodes`", spec.all_nodes),
            ("`perDeviceNodeSelection`", spec.per_device_node_selection),
        )
        if on
    ]
    if not chosen:
        raise n.required("spec", f"{NODE_SELECTION} is required")
    if len(chosen) > 1:
        found = "{" + ", ".join(chosen) + "}"
        raise n.invalid("spec", found, f"{NODE_SELECTION} is required, but multiple fields are set")
    if spec.node_name:
        n.check_subdomain("spec.nodeName", spec.node_name)
    if spec.node_selector is not None:
        _check_one_term(spec.node_selector, "spec.nodeSelector")


def _check_one_term(selector: NodeSelector, path: str) -> None:
    if len(selector.node_selector_terms) != 1:
        raise n.error(
            f"{path}.nodeSelectorTerms",
            f"Invalid value: {len(selector.node_selector_terms)} terms: must have exactly one "
            "node selector term",
        )


def _check_device(device: Device, path: str, per_device: bool) -> None:
    n.check_label(f"{path}.name", device.name)
    total = len(device.attributes) + len(device.capacity)
    if total > limits.RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE:
        raise n.invalid(
            path,
            total,
            "the total number of attributes and capacities must not exceed "
            f"{limits.RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE}",
        )
    for name, value in device.attributes.items():
        n.check_qualified_name(f"{path}.attributes.{name}", name)
        if isinstance(value, str) and len(value) > limits.DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH:
            raise n.too_long(f"{path}.attributes.{name}", limits.DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH)
    for name in device.capacity:
        n.check_qualified_name(f"{path}.capacity.{name}", name)
    each(device.taints, limits.DEVICE_TAINTS_MAX_LENGTH, f"{path}.taints", _check_taint)
    each(
        device.consumes_counters,
        limits.RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE,
        f"{path}.consumesCounters",
        _check_consumption,
    )
    unique(
        [c.counter_set for c in device.consumes_counters],
        f"{path}.consumesCounters",
        key="counterSet",
    )
    _check_device_node_selection(device, path, per_device)


def _check_device_node_selection(device: Device, path: str, per_device: bool) -> None:
    chosen = [
        name
        for name, on in (
            ("`nodeName`", device.node_name is not None),
            ("`nodeSelector`", device.node_selector is not None),
            ("`allNodes`", bool(device.all_nodes)),
        )
        if on
    ]
    if not per_device:
        if chosen:
            raise n.error(
                path,
                "Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set "
                "if `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
            )
        return
    if not chosen:
        raise n.required(path, DEVICE_NODE_SELECTION)
    if len(chosen) > 1:
        raise n.invalid(path, "{" + ", ".join(chosen) + "}", DEVICE_NODE_SELECTION)
    if device.node_selector is not None:
        _check_one_term(device.node_selector, f"{path}.nodeSelector")


def _check_taint(taint: DeviceTaint, path: str) -> None:
    if not taint.key:
        raise n.required(f"{path}.key")
    if taint.effect not in TAINT_EFFECTS:
        raise n.not_supported(f"{path}.effect", taint.effect, TAINT_EFFECTS)


def _check_counters(counters: Mapping[str, DeviceQuantity], path: str) -> None:
    if not counters:
        raise n.required(path)
    if len(counters) > limits.RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET:
        raise n.too_many(path, len(counters), limits.RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET)
    for name in counters:
        n.check_label(f"{path}.{name}", str(name))


def _check_counter_set(cset: CounterSet, path: str) -> None:
    n.check_label(f"{path}.name", cset.name)
    _check_counters(cset.counters, f"{path}.counters")


def _check_consumption(use: DeviceCounterConsumption, path: str) -> None:
    n.check_label(f"{path}.counterSet", use.counter_set)
    _check_counters(use.counters, f"{path}.counters")
