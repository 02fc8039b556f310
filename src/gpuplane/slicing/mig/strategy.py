"""What the NVIDIA device plugin advertises, and which MIG labels GFD writes, per MIG strategy.

Behaviour follows NVIDIA/k8s-device-plugin as read through the code index: ``internal/rm/
device_map.go`` and ``rm.go`` (which devices go under which resource; the start-up checks),
``internal/lm/mig-strategy.go`` and ``resource.go`` (GFD's MIG labels), and the MIG device's
``GetName`` (profile name with ``+`` replaced by ``.``). Described here in our own words:

- ``none`` (the default): MIG is ignored. Every physical GPU, MIG-enabled or not, is one
  ``nvidia.com/gpu``; GFD writes no MIG labels.
- ``single``: every MIG device is one ``nvidia.com/gpu``. The plugin refuses to start when a
  MIG-enabled GPU has no MIG device, when MIG-enabled and MIG-disabled GPUs are mixed on the node,
  or when the MIG devices are not all the same profile; GFD then writes the "invalid" labels
  (product ``<model>-MIG-INVALID``, count/replicas/memory 0). Valid: ``nvidia.com/gpu.product``
  becomes ``<model>-MIG-<profile>`` and count/memory/multiprocessors/slices/engines describe one
  MIG device. With no MIG-enabled GPU at all it behaves like ``none``.
- ``mixed``: GPUs without MIG stay ``nvidia.com/gpu``; each MIG device goes under
  ``nvidia.com/mig-<profile>`` (``+me`` written ``.me``), only for compute instances as wide as
  their GPU instance (the only kind gpuplane models). A MIG-enabled GPU without MIG devices also
  stops the plugin here (its device map asserts every MIG-enabled GPU has one); GFD just skips it.

Label values the fact sheet does not have (the NVENC count; SMs and memory for unverified
models) are left out and listed in ``unknown_labels`` rather than guessed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.api.strategies import MigStrategy
from gpuplane.slicing.mig.layout import EMPTY_LAYOUT, Instance, Layout
from gpuplane.slicing.mig.profiles import MigGpu, MigProfile
from gpuplane.topology.catalog import default_catalog

STRATEGY_LABEL = "nvidia.com/mig.strategy"


@dataclass(frozen=True, slots=True)
class NodeGpu:
    """One physical GPU as the device plugin finds it."""

    index: int
    model: MigGpu
    mig_enabled: bool
    layout: Layout = EMPTY_LAYOUT
    product: str | None = None  # the name NVML reports; default: the catalog's product name

    @property
    def product_name(self) -> str:
        if self.product:
            return self.product
        for m in default_catalog().models.values():
            if m.mig_profiles_key == self.model.key:
                return m.product_name
        return self.model.products[0]


@dataclass(frozen=True, slots=True)
class AdvertisedDevice:
    resource: str
    gpu: int
    instance: Instance | None  # None: the whole GPU


@dataclass(frozen=True, slots=True)
class PluginView:
    """The plugin's devices (none when it refuses to start) and GFD's MIG labels."""

    strategy: MigStrategy
    devices: tuple[AdvertisedDevice, ...]
    error: str | None
    labels: dict[str, str] = field(default_factory=dict)
    unknown_labels: tuple[str, ...] = ()

    def resources(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for d in self.devices:
            out[d.resource] = out.get(d.resource, 0) + 1
        return dict(sorted(out.items()))


_MEDIA = re.compile(r"(\d+)\s*NVDEC\s*/\s*(\d+)\s*JPEG\s*/\s*(\d+)\s*OFA")


def _attribute_labels(prefix: str, p: MigProfile) -> tuple[dict[str, str], list[str]]:
    """GFD's per-MIG-device attributes (NVML device attributes of one MIG device)."""
    values: dict[str, int | None] = {
        "memory": round(p.memory_gib * 1024) if p.memory_gib is not None else None,
        "multiprocessors": p.sm_count,
        "slices.gi": p.compute_slices,
        "slices.ci": p.compute_slices,
        "engines.copy": p.copy_engines,
        "engines.encoder": None,  # NVENC per MIG device: not in the fact sheet
    }
    media = _MEDIA.search(p.media or "")
    for i, name in enumerate(("engines.decoder", "engines.jpeg", "engines.ofa")):
        values[name] = int(media.group(i + 1)) if media else None
    labels = {f"{prefix}.{k}": str(v) for k, v in values.items() if v is not None}
    unknown = [f"{prefix}.{k}" for k, v in values.items() if v is None]
    return labels, unknown


def _resource_labels(
    resource: str, gpu: NodeGpu, p: MigProfile, count: int
) -> tuple[dict[str, str], list[str]]:
    product = "-".join(
        part.replace(" ", "-") for part in (gpu.product_name, "MIG", p.resource_suffix)
    )
    labels = {
        f"{resource}.product": product,
        f"{resource}.count": str(count),
        f"{resource}.replicas": "1",
    }
    attrs, unknown = _attribute_labels(resource, p)
    labels.update(attrs)
    return labels, unknown


def _invalid(gpus: Sequence[NodeGpu], reason: str) -> PluginView:
    first = next(g for g in gpus if g.mig_enabled)
    labels = {
        STRATEGY_LABEL: MigStrategy.SINGLE.value,
        f"{NVIDIA_GPU}.product": f"{first.product_name.replace(' ', '-')}-MIG-INVALID",
        f"{NVIDIA_GPU}.count": "0",
        f"{NVIDIA_GPU}.replicas": "0",
        f"{NVIDIA_GPU}.memory": "0",
    }
    return PluginView(MigStrategy.SINGLE, (), reason, dict(sorted(labels.items())))


def _mig_devices(gpus: Sequence[NodeGpu]) -> list[tuple[NodeGpu, Instance, MigProfile]]:
    return [
        (g, inst, g.model.profile(inst.profile))
        for g in gpus
        if g.mig_enabled
        for inst in g.layout.instances
    ]


def _single(gpus: Sequence[NodeGpu]) -> PluginView:
    enabled = [g for g in gpus if g.mig_enabled]
    if not enabled:
        full = tuple(AdvertisedDevice(NVIDIA_GPU, g.index, None) for g in gpus)
        return PluginView(MigStrategy.SINGLE, full, None, {STRATEGY_LABEL: "single"})
    if any(g.layout.is_empty for g in enabled):
        return _invalid(gpus, "at least one MIG-enabled GPU has no MIG devices")
    if len(enabled) != len(gpus):
        return _invalid(gpus, "GPUs with MIG enabled and disabled on the same node")
    migs = _mig_devices(gpus)
    if len({p.resource_suffix for _, _, p in migs}) != 1:
        return _invalid(gpus, "more than one MIG device type present on the node")
    gpu, _, profile = migs[0]
    labels, unknown = _resource_labels(NVIDIA_GPU, gpu, profile, len(migs))
    labels[STRATEGY_LABEL] = MigStrategy.SINGLE.value
    devices = tuple(AdvertisedDevice(NVIDIA_GPU, g.index, inst) for g, inst, _ in migs)
    return PluginView(
        MigStrategy.SINGLE, devices, None, dict(sorted(labels.items())), tuple(unknown)
    )


def _mixed(gpus: Sequence[NodeGpu]) -> PluginView:
    devices = [AdvertisedDevice(NVIDIA_GPU, g.index, None) for g in gpus if not g.mig_enabled]
    labels = {STRATEGY_LABEL: MigStrategy.MIXED.value}
    unknown: list[str] = []
    by_resource: dict[str, list[tuple[NodeGpu, MigProfile]]] = {}
    for g, inst, p in _mig_devices(gpus):
        devices.append(AdvertisedDevice(p.resource_name, g.index, inst))
        by_resource.setdefault(p.resource_name, []).append((g, p))
    for resource, members in by_resource.items():
        more, missing = _resource_labels(resource, members[0][0], members[0][1], len(members))
        labels.update(more)
        unknown.extend(missing)
    if any(g.mig_enabled and g.layout.is_empty for g in gpus):
        error = "at least one MIG-enabled GPU has no MIG devices"
        return PluginView(
            MigStrategy.MIXED, (), error, dict(sorted(labels.items())), tuple(unknown)
        )
    return PluginView(
        MigStrategy.MIXED, tuple(devices), None, dict(sorted(labels.items())), tuple(unknown)
    )


def plugin_view(gpus: Sequence[NodeGpu], strategy: MigStrategy) -> PluginView:
    """The device plugin's view of one node's GPUs under ``--mig-strategy=strategy``."""
    ordered = sorted(gpus, key=lambda g: g.index)
    if not ordered:
        return PluginView(strategy, (), None)
    if strategy is MigStrategy.NONE:
        full = tuple(AdvertisedDevice(NVIDIA_GPU, g.index, None) for g in ordered)
        return PluginView(strategy, full, None)
    if strategy is MigStrategy.SINGLE:
        return _single(ordered)
    return _mixed(ordered)
