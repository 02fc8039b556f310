"""MIG on a node: the initial layouts and the devices they advertise.

A pool with ``mig:`` (``twin.scenario.mig.MigPoolSpec``) runs its GPUs in MIG mode with one
layout per GPU. The initial layouts come
from a named mig-parted config (NVIDIA's defaults for the GPU model: ``all-1g.10gb``,
``all-balanced``, ...) applied as ``nvidia-mig-parted apply`` would (driver auto-placement).
The device plugin then advertises the instances:

- ``mixed``: one resource per profile, ``nvidia.com/mig-<profile>`` (``+me`` written ``.me``);
- ``single``: every instance as ``nvidia.com/gpu`` (the profile must be the same on every GPU).

The twin keeps MIG instances as devices (``DeviceSlot`` kind ``mig``) with their memory, so a
pod's ``gpuplane.io/gpu-memory`` demand is checked against its instance.
"""

from __future__ import annotations

from gpuplane.core.errors import InputError
from gpuplane.slicing.devices import DeviceKind, DeviceSlot
from gpuplane.slicing.mig.auto_place import apply_counts
from gpuplane.slicing.mig.catalog import get_mig_gpu
from gpuplane.slicing.mig.layout import EMPTY_LAYOUT, Layout
from gpuplane.slicing.mig.parted_defaults import default_configs
from gpuplane.slicing.mig.profiles import MigGpu
from gpuplane.topology.catalog import get_gpu_model
from gpuplane.topology.model import NodeTopology

GIB = 1024**3
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
MIG_STATE_LABEL = "nvidia.com/mig.config.state"


def mig_gpu_of(topo: NodeTopology) -> MigGpu:
    """The MIG model of the node's GPUs; InputError when they are not MIG-capable."""
    if not topo.gpus:
        raise InputError(f"{topo.name} has no GPUs", expected="a node with MIG-capable GPUs")
    model = get_gpu_model(str(topo.gpus[0].model))
    if model.mig_profiles_key is None:
        raise InputError(
            f"{model.name} GPUs do not support MIG", expected="A100, H100, H200, B200 or GH200"
        )
    return get_mig_gpu(model.mig_profiles_key)


def layouts_from_config(topo: NodeTopology, config: str) -> tuple[Layout, ...]:
    """Every GPU's layout after ``mig-parted apply -c <config>`` with NVIDIA's defaults."""
    gpu = mig_gpu_of(topo)
    parted = default_configs(gpu)
    if config not in parted.names():
        raise InputError(
            f"no mig-parted config {config!r} for {gpu.name}",
            expected=f"one of {', '.join(parted.names())}",
        )
    entries = parted.get(config)
    counts = dict(entries[0].mig_devices) if entries and entries[0].mig_enabled else {}
    if not counts:
        return tuple(EMPTY_LAYOUT for _ in topo.gpus)
    applied = apply_counts(gpu, counts)
    if applied.layout is None:
        raise InputError(f"mig-parted cannot apply {config!r} on {gpu.name}")
    return tuple(applied.layout for _ in topo.gpus)


def resource_name(gpu: MigGpu, profile: str) -> str:
    return gpu.profile(profile).resource_name


def mig_slots(
    topo: NodeTopology, layouts: tuple[Layout, ...], strategy: str
) -> tuple[list[DeviceSlot], dict[str, list[DeviceSlot]]]:
    """(``nvidia.com/gpu`` devices, other device resources) the plugin advertises."""
    gpu = mig_gpu_of(topo)
    slots: list[DeviceSlot] = []
    ext: dict[str, list[DeviceSlot]] = {}
    for index, layout in enumerate(layouts):
        for inst in layout.instances:
            p = gpu.profile(inst.profile)
            memory = int((p.memory_gib or p.nominal_memory_gb) * GIB)
            slot = DeviceSlot(
                index, DeviceKind.MIG, profile=p.name, start=inst.start, memory_bytes=memory
            )
            if strategy == "single":
                slots.append(slot)
            else:
                ext.setdefault(p.resource_name, []).append(slot)
    for name in {p.resource_name for p in gpu.profiles} if strategy != "single" else ():
        ext.setdefault(name, [])
    return slots, {k: ext[k] for k in sorted(ext)}
