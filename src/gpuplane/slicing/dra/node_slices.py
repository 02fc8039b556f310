"""Build the ResourceSlices NVIDIA's DRA driver would publish for one node, from gpuplane's
hardware model (``NodeTopology``) and an optional MIG layout per GPU (see ``nvidia.py`` for the
device names, attributes, capacities and counters).

The pool is the node (pool name = node name, ``nodeName`` set on every slice). Slices are cut as
the API requires: at most 128 devices per slice, 64 when devices consume counters, and counter
sets (at most 8 per slice) in slices of their own. All slices share one generation and give the
total ``resourceSliceCount``.

Facts the topology may lack are filled deterministically: a UUID derived from node and index,
a PCIe bus ID ``0000:<index+1>:00.0``, and ``pcieRoot`` only when the PCIe tree is known
(``pci0000:<n>`` for the n-th host bridge, standing in for the root complex's bus).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from gpuplane.core.errors import InputError
from gpuplane.slicing.dra import limits
from gpuplane.slicing.dra import nvidia as nv
from gpuplane.slicing.dra.devices import (
    CounterSet,
    Device,
    DeviceCounterConsumption,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)
from gpuplane.slicing.dra.quantity import DeviceQuantity, binary_quantity, int_quantity
from gpuplane.topology.catalog import get_gpu_model
from gpuplane.topology.model import BridgeKind, Gpu, NodeTopology

DYNAMIC = "dynamic"
STATIC = "static"


def gpu_facts(topo: NodeTopology, node: str) -> list[nv.GpuFacts]:
    island_of = {g: i for i, island in enumerate(topo.nvlink_islands()) for g in island}
    return [
        nv.GpuFacts(
            index=int(gpu.index),
            uuid=gpu.uuid or nv.synthetic_uuid(node, int(gpu.index)),
            product_name=get_gpu_model(gpu.model).product_name,
            architecture=nv.ARCHITECTURES[get_gpu_model(gpu.model).family],
            compute_capability=get_gpu_model(gpu.model).compute_capability,
            memory_bytes=get_gpu_model(gpu.model).memory_mib * 2**20,
            pcie_bus_id=_bus_id(gpu),
            pcie_root=_pcie_root(topo, gpu),
            nvlink_domain=island_of[int(gpu.index)],
            num_sms=get_gpu_model(gpu.model).num_sms,
        )
        for gpu in topo.gpus
    ]


def _bus_id(gpu: Gpu) -> str:
    """NVML's ``00000000:18:00.0`` as ``0000:18:00.0``; a placeholder when unknown."""
    if gpu.pci_bus_id:
        parts = gpu.pci_bus_id.lower().split(":")
        if len(parts) == 3 and all(parts):
            try:
                return f"{int(parts[0], 16):04x}:{parts[1]}:{parts[2]}"
            except ValueError:
                return gpu.pci_bus_id.lower()
        return gpu.pci_bus_id.lower()
    return f"0000:{int(gpu.index) + 1:02x}:00.0"


def _pcie_root(topo: NodeTopology, gpu: Gpu) -> str | None:
    bridges = {b.id: b for b in topo.bridges}
    roots = [b.id for b in topo.bridges if b.kind is BridgeKind.HOST_BRIDGE]
    current = bridges.get(gpu.parent) if gpu.parent is not None else None
    while current is not None and current.kind is not BridgeKind.HOST_BRIDGE:
        current = bridges.get(current.parent) if current.parent is not None else None
    if current is None:
        return None
    return f"pci0000:{roots.index(current.id):02x}"


def _gpu_device(
    gpu: nv.GpuFacts, versions: tuple[str, str], placements: Sequence[nv.MigPlacement] = ()
) -> Device:
    consumes: tuple[DeviceCounterConsumption, ...] = ()
    if placements:
        counters = _full_counters(gpu, placements)
        consumes = (DeviceCounterConsumption(nv.counter_set_name(gpu.index), counters),)
    return Device(
        name=nv.gpu_device_name(gpu.index),
        attributes=nv.gpu_attributes(gpu, *versions),
        capacity={"memory": binary_quantity(gpu.memory_bytes)},
        consumes_counters=consumes,
    )


def _full_counters(
    gpu: nv.GpuFacts, placements: Sequence[nv.MigPlacement]
) -> dict[str, DeviceQuantity]:
    """The GPU's counter set, which the full GPU consumes entirely. Memory and SMs are at least
    what any set of non-overlapping placements can take (eight memory slices, seven compute
    slices at the richest placement's rate), so they never refuse what the memory slices allow
    even when the placements carry nominal sizes."""
    per_slice = max(
        (p.memory_bytes / nv.memory_slices(p, gpu.memory_bytes) for p in placements), default=0
    )
    per_compute = max(
        ((p.multiprocessors or 0) / nv.compute_slices(p.profile) for p in placements), default=0
    )
    memory = max(gpu.memory_bytes, math.ceil(per_slice * nv.NUM_MEMORY_SLICES))
    sms = max(gpu.num_sms, math.ceil(per_compute * nv.NUM_COMPUTE_SLICES))
    counters = {"memory": binary_quantity(memory), "multiprocessors": int_quantity(sms)}
    for i in range(nv.NUM_MEMORY_SLICES):
        counters[nv.memory_slice_counter(i)] = int_quantity(1)
    return counters


def _mig_capacity(p: nv.MigPlacement) -> dict[str, DeviceQuantity]:
    optional = {
        "multiprocessors": p.multiprocessors,
        "copyEngines": p.copy_engines,
        "decoders": p.decoders,
        "encoders": p.encoders,
        "jpegEngines": p.jpeg_engines,
        "ofaEngines": p.ofa_engines,
    }
    capacity = {name: int_quantity(v) for name, v in optional.items() if v is not None}
    capacity["memory"] = binary_quantity(p.memory_bytes)
    return capacity


def _mig_device(
    gpu: nv.GpuFacts, p: nv.MigPlacement, versions: tuple[str, str], mode: str
) -> Device:
    size = nv.memory_slices(p, gpu.memory_bytes)
    if p.start < 0 or p.start + size > nv.NUM_MEMORY_SLICES:
        raise InputError(
            f"GPU {gpu.index}: MIG {p.profile} at start {p.start} covers memory slices "
            f"{p.start}-{p.start + size - 1}",
            expected=f"slices within 0-{nv.NUM_MEMORY_SLICES - 1}",
        )
    pid = nv.profile_id(p, size)
    capacity = _mig_capacity(p)
    if mode == STATIC:
        for i in range(p.start, p.start + size):
            capacity[f"memorySlice{i}"] = int_quantity(1)
        name = nv.static_mig_name(gpu.index, pid, p.start, size)
        return Device(name, nv.mig_attributes(gpu, p, *versions), capacity)
    counters = {"memory": binary_quantity(p.memory_bytes)}
    if p.multiprocessors is not None:
        counters["multiprocessors"] = int_quantity(p.multiprocessors)
    for i in range(p.start, p.start + size):
        counters[nv.memory_slice_counter(i)] = int_quantity(1)
    use = DeviceCounterConsumption(nv.counter_set_name(gpu.index), counters)
    name = nv.dynamic_mig_name(gpu.index, p, pid)
    return Device(name, nv.mig_attributes(gpu, p, *versions), capacity, consumes_counters=(use,))


def node_devices(
    gpus: Sequence[nv.GpuFacts],
    mig: Mapping[int, Sequence[nv.MigPlacement]],
    mode: str,
    versions: tuple[str, str],
) -> tuple[list[Device], list[CounterSet]]:
    devices: list[Device] = []
    counter_sets: list[CounterSet] = []
    for gpu in gpus:
        placements = mig.get(gpu.index, ())
        if mode == DYNAMIC and placements:
            counters = _full_counters(gpu, placements)
            counter_sets.append(CounterSet(nv.counter_set_name(gpu.index), counters))
            migs = [_mig_device(gpu, p, versions, mode) for p in placements]
            devices.append(_gpu_device(gpu, versions, placements))
            devices.extend(sorted(migs, key=lambda d: d.name))
        elif placements:
            migs = [_mig_device(gpu, p, versions, mode) for p in placements]
            devices.extend(sorted(migs, key=lambda d: d.name))
        else:
            devices.append(_gpu_device(gpu, versions))
    return devices, counter_sets


def node_resource_slices(
    topo: NodeTopology,
    *,
    node_name: str | None = None,
    mig: Mapping[int, Sequence[nv.MigPlacement]] | None = None,
    mig_mode: str = DYNAMIC,
    driver_version: str = nv.DEFAULT_DRIVER_VERSION,
    cuda_driver_version: str = nv.DEFAULT_CUDA_DRIVER_VERSION,
    generation: int = 1,
) -> tuple[ResourceSlice, ...]:
    """The node's ResourceSlices for driver ``gpu.nvidia.com`` (see the module doc)."""
    if mig_mode not in (DYNAMIC, STATIC):
        raise InputError(f"unknown MIG mode {mig_mode!r}", expected=f"{DYNAMIC} or {STATIC}")
    node = node_name or topo.name
    unknown = sorted(set(mig or {}) - {int(g.index) for g in topo.gpus})
    if unknown:
        raise InputError(f"MIG layout for GPU {unknown[0]}, which {node} does not have")
    versions = (driver_version, cuda_driver_version)
    devices, counter_sets = node_devices(gpu_facts(topo, node), mig or {}, mig_mode, versions)
    per_slice = (
        limits.RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES
        if any(d.consumes_counters for d in devices)
        else limits.RESOURCE_SLICE_MAX_DEVICES
    )
    step = limits.RESOURCE_SLICE_MAX_COUNTER_SETS
    parts: list[tuple[tuple[Device, ...], tuple[CounterSet, ...]]] = [
        ((), tuple(counter_sets[i : i + step])) for i in range(0, len(counter_sets), step)
    ]
    parts += [(tuple(devices[i : i + per_slice]), ()) for i in range(0, len(devices), per_slice)]
    pool = ResourcePool(node, generation, len(parts))
    return tuple(
        ResourceSlice(
            name=f"{node}-{nv.DRIVER}-{k}",
            spec=ResourceSliceSpec(
                driver=nv.DRIVER,
                pool=pool,
                node_name=node,
                devices=devs,
                shared_counters=sets,
            ),
        )
        for k, (devs, sets) in enumerate(parts)
    )
