"""The node labels NVIDIA GPU Feature Discovery (GFD) writes for full GPUs (no MIG strategy).

Behaviour follows NVIDIA/k8s-device-plugin ``internal/lm`` as read through the code index:
``resource.go`` @ aaccdfd2 (product/count/replicas/sharing-strategy/memory/family/compute labels,
product sanitising, the architecture table), ``nvml.go`` @ 03f72f90 (version, mig.capable,
mps.capable and gpu.mode labels), ``mig-strategy.go`` @ b9fe486d (one labeler per product name),
``machine-type.go`` @ a9e8bafe and ``output.go`` @ 1f3d112d (``key=value`` lines), and
``api/config/v1/sharing.go`` @ 03973a97 (sharing strategies). Descriptions, not copies.

Deliberate differences, all for determinism or because gpuplane has no live device:

- No ``nvidia.com/gfd.timestamp`` (GFD writes the Unix time unless ``--no-timestamp``); a
  timestamp would make equal inputs give different labels.
- Mixed GPU models: GFD builds one labeler per product name from a Go map and merges them, so
  which product wins ``gpu.product``/``gpu.count``/``gpu.memory``/... is random. gpuplane takes
  the first GPU's product (GPU 0) and counts the GPUs with that product, as GFD does per name.
- ``gpu.mode``: GFD reads ``/sys/bus/pci/devices/<bus>/class`` of the GPUs (0x030000 ->
  graphics, 0x030200 -> compute, else unknown). Discovery passes that class in ``GpuFacts``;
  without it a name rule stands in (see :func:`gpu_mode`).
- ``mig.capable``: GFD asks NVML (nvmlDeviceGetMigMode succeeds); here the catalog says
  (``mig_profiles_key``), and products missing from the catalog count as not MIG-capable.
- Blackwell: the architecture table read (resource.go @ aaccdfd2) stops at compute capability 9,
  so a B200 (10.0) is labelled ``nvidia.com/gpu.family=undefined``. Kept as GFD does it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.api.strategies import SharingStrategy
from gpuplane.core.errors import InputError
from gpuplane.topology.catalog import GpuModel, default_catalog
from gpuplane.topology.model import NodeTopology
from gpuplane.topology.nvml_api import DriverInfo, GpuFacts


@dataclass(frozen=True, slots=True)
class GpuSharing:
    """The device plugin's ``sharing`` config as it applies to ``nvidia.com/gpu``.

    ``renamed``: the replicated resource is advertised under another name (``rename:``), which
    stops GFD from appending ``-SHARED`` to the product.
    """

    strategy: SharingStrategy = SharingStrategy.NONE
    replicas: int = 1
    renamed: bool = False

    def __post_init__(self) -> None:
        if self.replicas < 1:
            raise ValueError(f"replicas must be >= 1, got {self.replicas}")
        if self.strategy is SharingStrategy.NONE and self.replicas != 1:
            raise ValueError("replicas > 1 needs the time-slicing or mps strategy")


# The default device-plugin config: nothing replicated.
NO_SHARING = GpuSharing()

# resource.go sanitise(): drop everything outside [A-Za-z0-9-_. ], join whitespace runs with "-".
_UNSAFE = re.compile(r"[^A-Za-z0-9\-_. ]")


def sanitise(text: str) -> str:
    return "-".join(_UNSAFE.sub("", text).split())


def arch_family(major: int, minor: int) -> str:
    """resource.go getArchFamily(): the family name GFD derives from the compute capability."""
    by_major = {1: "tesla", 2: "fermi", 3: "kepler", 5: "maxwell", 6: "pascal", 9: "hopper"}
    if major == 7:
        return "volta" if minor < 5 else "turing"
    if major == 8:
        return "ampere" if minor < 9 else "ada-lovelace"
    return by_major.get(major, "undefined")


_PCI_CLASS_MODE = {"0x030000": "graphics", "0x030200": "compute"}
# Boards with display outputs enumerate as a VGA controller (class 0x030000); data-centre GPUs as
# a 3D controller (0x030200). Stand-in when the PCI class is not known: consumer and workstation
# brands are graphics, unless NVIDIA calls them "Server Edition".
_DISPLAY_BRANDS = re.compile(r"GeForce|TITAN|Quadro|\bRTX\b", re.IGNORECASE)


def gpu_mode(product: str, pci_class: str | None = None) -> str:
    """``nvidia.com/gpu.mode``: from the PCI class as GFD does, else from the product name."""
    if pci_class is not None:
        return _PCI_CLASS_MODE.get(pci_class.strip().lower(), "unknown")
    if _DISPLAY_BRANDS.search(product) and "server edition" not in product.lower():
        return "graphics"
    return "compute"


def version_labels(driver: DriverInfo) -> dict[str, str]:
    """nvml.go newVersionLabeler(): deprecated ``cuda.driver.*`` and current ``*-version.*``."""
    parts = driver.driver_version.strip().split(".")
    if not 2 <= len(parts) <= 3:
        raise InputError(
            f"driver version {driver.driver_version!r} has {len(parts)} part(s)",
            expected='"X.Y" or "X.Y.Z", e.g. 550.54.15',
        )
    major, minor = parts[0], parts[1]
    rev = parts[2] if len(parts) == 3 else ""
    cuda_major, cuda_minor = str(driver.cuda_major), str(driver.cuda_minor)
    return {
        "nvidia.com/cuda.driver.major": major,
        "nvidia.com/cuda.driver.minor": minor,
        "nvidia.com/cuda.driver.rev": rev,
        "nvidia.com/cuda.runtime.major": cuda_major,
        "nvidia.com/cuda.runtime.minor": cuda_minor,
        "nvidia.com/cuda.driver-version.major": major,
        "nvidia.com/cuda.driver-version.minor": minor,
        "nvidia.com/cuda.driver-version.revision": rev,
        "nvidia.com/cuda.driver-version.full": driver.driver_version.strip(),
        "nvidia.com/cuda.runtime-version.major": cuda_major,
        "nvidia.com/cuda.runtime-version.minor": cuda_minor,
        "nvidia.com/cuda.runtime-version.full": f"{cuda_major}.{cuda_minor}",
    }


def _resource_labels(product: str, count: int, sharing: GpuSharing | None) -> dict[str, str]:
    # resource.go baseLabeler(). sharing=None is GFD's nil config ("sharing disabled"), which GFD
    # only uses for MIG-enabled GPUs: replicas 0, strategy none.
    replicas = 0 if sharing is None else sharing.replicas
    shared = sharing is not None and replicas > 1
    strategy = sharing.strategy if sharing is not None and shared else SharingStrategy.NONE
    name = sanitise(product)
    if shared and sharing is not None and not sharing.renamed and name:
        name += "-SHARED"
    return {
        f"{NVIDIA_GPU}.product": name,
        f"{NVIDIA_GPU}.count": str(count),
        f"{NVIDIA_GPU}.replicas": str(replicas),
        f"{NVIDIA_GPU}.sharing-strategy": strategy.value,
    }


@dataclass(frozen=True, slots=True)
class _Device:
    """The facts GFD reads from its first device, from NVML facts or else the catalog."""

    product: str
    count: int
    memory_mib: int | None
    compute: tuple[int, int] | None
    pci_class: str | None


def _first_device(topo: NodeTopology, facts: Sequence[GpuFacts]) -> _Device:
    if facts:
        f = facts[0]
        count = sum(1 for other in facts if other.name == f.name)
        return _Device(f.name, count, f.memory_mib, f.compute_capability, f.pci_class)
    first = topo.gpus[0]
    model: GpuModel | None = default_catalog().find(first.model)
    count = sum(1 for g in topo.gpus if g.model == first.model)
    if model is None:
        return _Device(first.model, count, None, None, None)
    return _Device(model.product_name, count, model.memory_mib, model.compute_capability, None)


def gfd_labels(
    topo: NodeTopology,
    *,
    driver: DriverInfo | None = None,
    machine: str | None = None,
    sharing: GpuSharing | None = NO_SHARING,
    facts: Sequence[GpuFacts] = (),
) -> dict[str, str]:
    """The labels GFD would write for ``topo``'s GPUs, sorted by key.

    ``machine`` overrides ``topo.machine`` (the DMI product name). ``facts`` (from NVML
    discovery) take precedence over the catalog for name, memory, compute capability and PCI
    class. ``sharing=None`` means sharing disabled (replicas 0). A node without GPUs gets no
    labels, as GFD's device labeler returns none.
    """
    if not topo.gpus:
        return {}
    if facts and len(facts) != len(topo.gpus):
        raise ValueError(f"{len(facts)} GpuFacts for {len(topo.gpus)} GPUs")
    dev = _first_device(topo, facts)
    labels = _resource_labels(dev.product, dev.count, sharing)
    # GFD leaves the memory label out when NVML reports 0, and the architecture labels out when
    # the compute major is 0; an uncatalogued GPU without facts is treated the same way.
    if dev.memory_mib:
        labels[f"{NVIDIA_GPU}.memory"] = str(dev.memory_mib)
    if dev.compute is not None and dev.compute[0] != 0:
        major, minor = dev.compute
        labels[f"{NVIDIA_GPU}.family"] = arch_family(major, minor)
        labels[f"{NVIDIA_GPU}.compute.major"] = str(major)
        labels[f"{NVIDIA_GPU}.compute.minor"] = str(minor)
    catalog = default_catalog()
    mig = any((m := catalog.find(g.model)) is not None and m.mig_capable for g in topo.gpus)
    labels["nvidia.com/mig.capable"] = "true" if mig else "false"
    # nvml.go newSharingLabeler(): "true" once MPS is configured (no MIG-enabled GPU here).
    mps = sharing is not None and sharing.strategy is SharingStrategy.MPS
    labels["nvidia.com/mps.capable"] = "true" if mps else "false"
    labels["nvidia.com/gpu.mode"] = gpu_mode(dev.product, dev.pci_class)
    # machine-type.go: the file's text, trimmed, spaces -> "-" (no other sanitising); "unknown"
    # when the file cannot be read.
    dmi = (machine if machine is not None else topo.machine or "").strip()
    labels["nvidia.com/gpu.machine"] = dmi.replace(" ", "-") if dmi else "unknown"
    if driver is not None:
        labels.update(version_labels(driver))
    return dict(sorted(labels.items()))


def format_gfd_labels(labels: dict[str, str]) -> str:
    """GFD's output file (``/etc/kubernetes/node-feature-discovery/features.d/gfd``): key=value."""
    return "".join(f"{key}={value}\n" for key, value in sorted(labels.items()))
