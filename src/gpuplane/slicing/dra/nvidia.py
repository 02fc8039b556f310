"""The devices NVIDIA's DRA driver (NVIDIA/k8s-dra-driver-gpu, driver ``gpu.nvidia.com``)
publishes for full GPUs and MIG devices, and gpuplane's NVLink island attribute.

Full GPU ``gpu-<minor>``: attributes ``type: gpu``, ``uuid``, ``productName``, ``brand``,
``architecture``, ``cudaComputeCapability``, ``driverVersion`` and ``cudaDriverVersion``
(versions), ``pcieBusID`` and the standard ``resource.kubernetes.io/pcieRoot`` where the PCIe
tree is known; capacity ``memory`` in bytes. ``index`` and ``minor`` (and ``parentIndex`` /
``parentMinor`` on MIG devices) are kept from the driver's earlier releases because they make
selectors easy to write; newer releases dropped them.

MIG device, attributes ``type: mig``, ``parentUUID``, ``profile`` and the parent's product,
brand, architecture and versions; capacities ``multiprocessors``, ``copyEngines``, ``decoders``,
``encoders``, ``jpegEngines``, ``ofaEngines`` (when known) and ``memory``. Two ways to publish:

- static MIG (the GPU is already partitioned): one device per existing instance,
  ``gpu-<minor>-mig-<GI profile id>-<start>-<size>``, with a ``uuid`` and a ``memorySlice<i>``
  capacity of 1 per memory slice it holds;
- dynamic MIG (partitionable devices, KEP 4815): the full GPU and every MIG placement it offers
  are all devices, named ``gpu-<minor>-mig-<profile without dots>-<GI profile id>-<start>``. One
  counter set per GPU, ``gpu-<minor>-counter-set``, holds ``memory``, ``multiprocessors`` and
  ``memory-slice-<i>`` = 1 for each of the 8 memory slices (gpuplane sizes memory and SMs so
  that they never refuse what the memory slices allow; the driver takes the largest profile's
  values, and also counts copy engines, decoders and the like, which gpuplane does not); the
  full GPU consumes all of it, a MIG placement its memory, its SMs (when given) and its own
  memory slices, so two placements over one memory slice, or a placement and the full GPU, are
  never allocated together.

gpuplane's own attribute ``gpuplane.io/nvlinkDomain`` (int) numbers the NVLink islands of the
node (``NodeTopology.nvlink_islands``; an NVSwitch fabric is one island, a GPU without NVLink is
an island of its own), so ``constraints: [{matchAttribute: gpuplane.io/nvlinkDomain}]`` asks
for GPUs that talk over NVLink.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from gpuplane.core.errors import InputError
from gpuplane.slicing.dra import limits
from gpuplane.slicing.dra.cel.semver import Version, loose_version
from gpuplane.slicing.dra.devices import AttributeValue

DRIVER = "gpu.nvidia.com"
NVLINK_DOMAIN_ATTRIBUTE = "gpuplane.io/nvlinkDomain"
GPU_TYPE = "gpu"
MIG_TYPE = "mig"
NUM_MEMORY_SLICES = 8
NUM_COMPUTE_SLICES = 7
DEFAULT_DRIVER_VERSION = "580.82.07"
DEFAULT_CUDA_DRIVER_VERSION = "13.0"
BRAND = "Nvidia"  # go-nvlib's brand string for data-center GPUs

# The GPU model catalog's family -> NVML's architecture name as the driver publishes it.
ARCHITECTURES = {
    "volta": "Volta",
    "turing": "Turing",
    "ampere": "Ampere",
    "ada-lovelace": "Ada Lovelace",
    "hopper": "Hopper",
    "blackwell": "Blackwell",
}
# (compute slices, memory slices, media extensions) -> GPU instance profile id (nvidia-smi mig
# -lgip "ID"), the same on A100, H100 and H200.
_PROFILE_IDS = {(7, 8, False): 0, (4, 4, False): 5, (3, 4, False): 9, (2, 2, False): 14}
_PROFILE_IDS |= {(1, 2, False): 15, (1, 1, False): 19, (1, 1, True): 20}
_PROFILE = re.compile(r"^(\d)g\.(\d+)gb(\+me)?$")


@dataclass(frozen=True, slots=True)
class MigPlacement:
    """One MIG instance a GPU has (static) or can have (dynamic): a GPU instance profile placed
    at its first memory slice. Unset counts are taken from the profile name and GPU memory."""

    profile: str  # "3g.40gb", "1g.10gb+me"
    start: int
    memory_bytes: int
    memory_slices: int | None = None
    profile_id: int | None = None
    multiprocessors: int | None = None
    copy_engines: int | None = None
    decoders: int | None = None
    encoders: int | None = None
    jpeg_engines: int | None = None
    ofa_engines: int | None = None
    uuid: str | None = None  # static MIG: the MIG device's UUID


@dataclass(frozen=True, slots=True)
class GpuFacts:
    """What the driver reads from NVML for one GPU."""

    index: int
    uuid: str
    product_name: str
    architecture: str
    compute_capability: tuple[int, int]
    memory_bytes: int
    pcie_bus_id: str
    pcie_root: str | None
    nvlink_domain: int
    num_sms: int


def compute_slices(profile: str) -> int:
    match = _PROFILE.match(profile)
    if match is None:
        raise InputError(f"MIG profile {profile!r} is not <g>g.<N>gb[+me]", expected="1g.10gb")
    return int(match.group(1))


def memory_slices(placement: MigPlacement, gpu_memory_bytes: int) -> int:
    """The placement's memory slices: given, else its nominal size (``<N>gb``, which tracks GiB)
    over an eighth of the GPU's memory, rounded (A100/H100/H200 names all resolve this way)."""
    if placement.memory_slices is not None:
        return placement.memory_slices
    match = _PROFILE.match(placement.profile)
    if match is None:
        raise InputError(f"MIG profile {placement.profile!r} is not <g>g.<N>gb[+me]")
    eighth_gib = gpu_memory_bytes / NUM_MEMORY_SLICES / 2**30
    return max(1, min(NUM_MEMORY_SLICES, round(int(match.group(2)) / eighth_gib)))


def profile_id(placement: MigPlacement, slices: int) -> int:
    if placement.profile_id is not None:
        return placement.profile_id
    media = placement.profile.endswith("+me")
    key = (compute_slices(placement.profile), slices, media)
    if key not in _PROFILE_IDS:
        raise InputError(
            f"no known GPU instance profile id for {placement.profile!r}",
            expected="profile_id given with the placement",
        )
    return _PROFILE_IDS[key]


def gpu_device_name(index: int) -> str:
    return f"gpu-{index}"


def dynamic_mig_name(index: int, placement: MigPlacement, pid: int) -> str:
    compact = re.sub(r"[^a-z0-9-.]", "-", placement.profile.replace(".", "").lower()).strip("-")
    return f"gpu-{index}-mig-{compact}-{pid}-{placement.start}"


def static_mig_name(index: int, pid: int, start: int, size: int) -> str:
    return f"gpu-{index}-mig-{pid}-{start}-{size}"


def counter_set_name(index: int) -> str:
    return f"gpu-{index}-counter-set"


def memory_slice_counter(i: int) -> str:
    return f"memory-slice-{i}"


def synthetic_uuid(node: str, index: int, prefix: str = "GPU") -> str:
    """A stable stand-in UUID when the topology does not know the real one."""
    return f"{prefix}-{uuid.uuid5(uuid.NAMESPACE_URL, f'gpuplane://{node}/{index}')}"


def common_attributes(
    gpu: GpuFacts, driver_version: str, cuda_version: str
) -> dict[str, AttributeValue]:
    major, minor = gpu.compute_capability
    attrs: dict[str, AttributeValue] = {
        "productName": gpu.product_name,
        "brand": BRAND,
        "architecture": gpu.architecture,
        "cudaComputeCapability": Version(major, minor, 0),
        "driverVersion": loose_version(driver_version),
        "cudaDriverVersion": loose_version(cuda_version),
        "pcieBusID": gpu.pcie_bus_id,
        NVLINK_DOMAIN_ATTRIBUTE: gpu.nvlink_domain,
    }
    if gpu.pcie_root is not None:
        attrs[limits.PCIE_ROOT_ATTRIBUTE] = gpu.pcie_root
    return attrs


def gpu_attributes(
    gpu: GpuFacts, driver_version: str, cuda_version: str
) -> dict[str, AttributeValue]:
    attrs: dict[str, AttributeValue] = {"type": GPU_TYPE, "uuid": gpu.uuid}
    attrs |= {"index": gpu.index, "minor": gpu.index}
    return attrs | common_attributes(gpu, driver_version, cuda_version)


def mig_attributes(
    gpu: GpuFacts, placement: MigPlacement, driver_version: str, cuda_version: str
) -> dict[str, AttributeValue]:
    attrs: dict[str, AttributeValue] = {"type": MIG_TYPE, "parentUUID": gpu.uuid}
    attrs |= {"profile": placement.profile, "parentIndex": gpu.index, "parentMinor": gpu.index}
    if placement.uuid is not None:
        attrs["uuid"] = placement.uuid
    return attrs | common_attributes(gpu, driver_version, cuda_version)
