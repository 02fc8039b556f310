"""Factories for the DRA tests (``dev``, ``rslice``, ``dclass``, ``req``, ``claim``, ``run``)
and checks of the factories themselves."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gpuplane.slicing.dra import limits
from gpuplane.slicing.dra.allocation import OpaqueDeviceConfiguration
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
    ResourceClaimSpec,
)
from gpuplane.slicing.dra.devices import (
    AttributeValue,
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
from gpuplane.slicing.dra.node_selector import DraNode, NodeSelector
from gpuplane.slicing.dra.outcome import AllocationOutcome, Features
from gpuplane.slicing.dra.quantity import DeviceQuantity, int_quantity, parse_quantity

DRIVER = "gpu.nvidia.com"
NODE = DraNode("n0", {})


def dev(
    name: str,
    *,
    cap: Mapping[str, str] | None = None,
    consumes: Mapping[str, Mapping[str, int]] | None = None,
    taints: Sequence[DeviceTaint] = (),
    node_name: str | None = None,
    **attrs: AttributeValue,
) -> Device:
    return Device(
        name,
        attributes=dict(attrs),
        capacity={k: parse_quantity(v) for k, v in (cap or {}).items()},
        consumes_counters=tuple(
            DeviceCounterConsumption(cset, {k: int_quantity(v) for k, v in counters.items()})
            for cset, counters in (consumes or {}).items()
        ),
        taints=tuple(taints),
        node_name=node_name,
    )


def rslice(
    name: str,
    devices: Iterable[Device] = (),
    *,
    node: str | None = "n0",
    pool: str | None = None,
    gen: int = 0,
    count: int = 1,
    driver: str = DRIVER,
    counters: Mapping[str, Mapping[str, int]] | None = None,
    all_nodes: bool = False,
    selector: NodeSelector | None = None,
    per_device: bool = False,
) -> ResourceSlice:
    sets = tuple(
        CounterSet(n, {k: int_quantity(v) for k, v in c.items()})
        for n, c in (counters or {}).items()
    )
    spec = ResourceSliceSpec(
        driver=driver,
        pool=ResourcePool(pool or node or "pool", gen, count),
        node_name=None if all_nodes or selector or per_device else node,
        node_selector=selector,
        all_nodes=all_nodes,
        per_device_node_selection=per_device,
        devices=tuple(devices),
        shared_counters=sets,
    )
    return ResourceSlice(name, spec)


def gpus(node: str = "n0", n: int = 4, **attrs: Any) -> ResourceSlice:
    return rslice(f"{node}-slice", [dev(f"gpu-{i}", index=i, **attrs) for i in range(n)], node=node)


def dclass(
    name: str = "gpu", *selectors: str, config: Sequence[OpaqueDeviceConfiguration] = ()
) -> DeviceClass:
    return DeviceClass(name, DeviceClassSpec(tuple(selectors), tuple(config)))


def req(
    name: str = "gpu",
    count: int = 1,
    *,
    cls: str = "gpu",
    selectors: Sequence[str] = (),
    mode: str = limits.EXACT_COUNT,
    admin: bool | None = None,
    tolerations: Sequence[DeviceToleration] = (),
) -> DeviceRequest:
    exact = ExactDeviceRequest(
        cls,
        tuple(selectors),
        mode,
        count if mode == limits.EXACT_COUNT else 0,
        admin,
        tuple(tolerations),
    )
    return DeviceRequest(name, exactly=exact)


def sub(
    name: str, count: int = 1, *, cls: str = "gpu", selectors: Sequence[str] = ()
) -> DeviceSubRequest:
    return DeviceSubRequest(name, cls, tuple(selectors), limits.EXACT_COUNT, count)


def first(name: str, *subs: DeviceSubRequest) -> DeviceRequest:
    return DeviceRequest(name, first_available=subs)


def match(attribute: str, *requests: str) -> DeviceConstraint:
    return DeviceConstraint(tuple(requests), attribute)


def claim(
    name: str,
    *requests: DeviceRequest,
    constraints: Sequence[DeviceConstraint] = (),
    config: Sequence[DeviceClaimConfiguration] = (),
    namespace: str = "default",
) -> ResourceClaim:
    devices = DeviceClaim(tuple(requests), tuple(constraints), tuple(config))
    return ResourceClaim(name, namespace, f"uid-{name}", ResourceClaimSpec(devices))


def run(
    claims: Sequence[ResourceClaim],
    slices: Sequence[ResourceSlice],
    classes: Sequence[DeviceClass] = (),
    *,
    allocated: Iterable[tuple[str, str]] = (),
    node: DraNode = NODE,
    features: Features | None = None,
) -> AllocationOutcome:
    """Allocate with the ``gpu`` class (any device) unless classes are given; ``allocated``
    lists (pool, device) pairs of driver gpu.nvidia.com already held by other claims."""
    classes = classes or [dclass()]
    taken = {DeviceID(DRIVER, pool, device) for pool, device in allocated}
    return allocate(claims, slices, {c.name: c for c in classes}, taken, node, features=features)


def chosen(outcome: AllocationOutcome, i: int = 0) -> list[str]:
    """The devices allocated for claim ``i``."""
    assert outcome.ok, outcome
    return [r.device for r in outcome.results[i].devices.results]


def qty(text: str) -> DeviceQuantity:
    return parse_quantity(text)


def test_factories_build_a_node_local_slice() -> None:
    s = gpus(n=2, model="a")
    assert s.spec.node_name == "n0" and s.spec.pool.name == "n0"
    assert [d.name for d in s.spec.devices] == ["gpu-0", "gpu-1"]
    assert chosen(run([claim("c", req())], [s])) == ["gpu-0"]
