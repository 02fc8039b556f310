"""The NVML seam: the calls discovery needs behind a Protocol, and the real pynvml implementation.

``PynvmlApi`` is the only code that touches ``pynvml``; tests pass a fake ``NvmlApi``. When the
driver library is missing, the real implementation raises ``UnavailableError`` with a message that
says what is missing and what to do instead.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from gpuplane.core.errors import UnavailableError
from gpuplane.core.units import MIB

# nvmlNvLinkDeviceType_t (nvml.h).
NVLINK_REMOTE_GPU = 0
NVLINK_REMOTE_IBMNPU = 1
NVLINK_REMOTE_SWITCH = 2
NVLINK_REMOTE_UNKNOWN = 0xFF


SysfsReader = Callable[[str], str | None]


def read_sysfs(path: str) -> str | None:
    """The file's text, or None when it cannot be read (no such device, not Linux...)."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class DriverInfo:
    """Driver and CUDA driver versions as NVML reports them (``"550.54.15"``, ``12040``)."""

    driver_version: str
    cuda_driver_version: int

    # k8s-device-plugin internal/resource (nvml-lib.go): major = v / 1000, minor = v % 1000 / 10.
    @property
    def cuda_major(self) -> int:
        return self.cuda_driver_version // 1000

    @property
    def cuda_minor(self) -> int:
        return self.cuda_driver_version % 1000 // 10


@dataclass(frozen=True, slots=True)
class GpuFacts:
    """What NVML and sysfs say about one GPU, before it is matched to the catalog."""

    index: int
    name: str
    uuid: str
    pci_bus_id: str
    memory_total_bytes: int
    compute_capability: tuple[int, int]
    cpu_affinity: tuple[int, ...] = ()
    pci_numa_node: int | None = None
    gpu_numa_node: int | None = None
    pci_class: str | None = None

    @property
    def memory_mib(self) -> int:
        """Total memory in MiB, truncated, as GFD computes ``nvidia.com/gpu.memory``."""
        return self.memory_total_bytes // MIB


class NvmlApi(Protocol):
    """The NVML calls discovery needs, by GPU index, so tests can pass a fake.

    ``numa_node_id`` (nvmlDeviceGetNumaNodeId) and ``nvlink_remote_type`` return None where the
    binding, driver or platform lacks them; ``common_ancestor`` returns the
    nvmlGpuTopologyLevel_t value; ``nvlink_state`` is None for a port the GPU does not have.
    """

    def init(self) -> None: ...
    def shutdown(self) -> None: ...
    def driver_version(self) -> str: ...
    def cuda_driver_version(self) -> int: ...
    def device_count(self) -> int: ...
    def name(self, index: int) -> str: ...
    def uuid(self, index: int) -> str: ...
    def pci_bus_id(self, index: int) -> str: ...
    def memory_total_bytes(self, index: int) -> int: ...
    def compute_capability(self, index: int) -> tuple[int, int]: ...
    def cpu_affinity(self, index: int) -> tuple[int, ...]: ...
    def numa_node_id(self, index: int) -> int | None: ...
    def common_ancestor(self, a: int, b: int) -> int: ...
    def max_nvlinks(self) -> int: ...
    def nvlink_state(self, index: int, link: int) -> bool | None: ...
    def nvlink_remote_bus_id(self, index: int, link: int) -> str: ...
    def nvlink_remote_type(self, index: int, link: int) -> int | None: ...


def no_nvml_message(detail: str) -> str:
    return (
        f"Cannot read this node through NVML: {detail}. gpuplane reads the live node through "
        "libnvidia-ml.so.1, which the NVIDIA driver installs and which needs the NVIDIA kernel "
        "driver loaded; one of them is missing here (no NVIDIA GPU or driver on this machine, or "
        "a container started without the NVIDIA runtime). Instead, run `nvidia-smi topo -m > "
        "topo.txt` on the GPU node and pass that file to gpuplane, or use a hardware preset."
    )


def cpus_from_mask(words: Sequence[int], bits_per_word: int = 64) -> tuple[int, ...]:
    """CPU ids set in an NVML affinity bitmask (array of unsigned longs, lowest CPU first)."""
    return tuple(
        w * bits_per_word + b
        for w, word in enumerate(words)
        for b in range(bits_per_word)
        if word >> b & 1
    )


_BUS_RE = re.compile(r"^(?:([0-9a-fA-F]+):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])$")


def sysfs_bus_id(bus_id: str) -> str:
    """NVML's ``00000000:18:00.0`` (or the legacy 4-digit domain) as sysfs names it."""
    m = _BUS_RE.match(bus_id.strip())
    if m is None:
        return bus_id.strip().lower()
    domain = int(m.group(1) or "0", 16)
    return f"{domain:04x}:{int(m.group(2), 16):02x}:{int(m.group(3), 16):02x}.{m.group(4)}"


class PynvmlApi:
    """:class:`NvmlApi` over nvidia-ml-py; building one imports ``pynvml``."""

    def __init__(self) -> None:
        try:
            import pynvml
        except ImportError as err:
            detail = f"the Python NVML binding (nvidia-ml-py) could not be imported ({err})"
            raise UnavailableError(no_nvml_message(detail)) from None
        self._nv: Any = pynvml
        self._handles: list[Any] = []

    def _call(self, what: str, *args: Any) -> Any:
        try:
            return getattr(self._nv, what)(*args)
        except self._nv.NVMLError as err:
            missing = (self._nv.NVMLError_LibraryNotFound, self._nv.NVMLError_DriverNotLoaded)
            if isinstance(err, missing):
                raise UnavailableError(no_nvml_message(f"{what} says {err!s}")) from None
            raise UnavailableError(f"NVML call {what} failed: {err!s}") from None

    def _optional(self, what: str, *args: Any) -> Any:
        # Calls newer than the binding, or unsupported on this GPU/platform: None, not an error.
        fn = getattr(self._nv, what, None)
        if fn is None:
            return None
        try:
            return fn(*args)
        except self._nv.NVMLError:
            return None

    def init(self) -> None:
        self._call("nvmlInit")
        count = int(self._call("nvmlDeviceGetCount"))
        self._handles = [self._call("nvmlDeviceGetHandleByIndex", i) for i in range(count)]

    def shutdown(self) -> None:
        self._call("nvmlShutdown")

    def driver_version(self) -> str:
        return str(self._call("nvmlSystemGetDriverVersion"))

    def cuda_driver_version(self) -> int:
        return int(self._call("nvmlSystemGetCudaDriverVersion"))

    def device_count(self) -> int:
        return len(self._handles)

    def name(self, index: int) -> str:
        return str(self._call("nvmlDeviceGetName", self._handles[index]))

    def uuid(self, index: int) -> str:
        return str(self._call("nvmlDeviceGetUUID", self._handles[index]))

    def pci_bus_id(self, index: int) -> str:
        return str(self._call("nvmlDeviceGetPciInfo", self._handles[index]).busId)

    def memory_total_bytes(self, index: int) -> int:
        return int(self._call("nvmlDeviceGetMemoryInfo", self._handles[index]).total)

    def compute_capability(self, index: int) -> tuple[int, int]:
        major, minor = self._call("nvmlDeviceGetCudaComputeCapability", self._handles[index])
        return int(major), int(minor)

    def cpu_affinity(self, index: int) -> tuple[int, ...]:
        words = max(1, math.ceil((os.cpu_count() or 1) / 64))
        mask = self._call("nvmlDeviceGetCpuAffinity", self._handles[index], words)
        return cpus_from_mask([int(w) for w in mask])

    def numa_node_id(self, index: int) -> int | None:
        node = self._optional("nvmlDeviceGetNumaNodeId", self._handles[index])
        return None if node is None else int(node)

    def common_ancestor(self, a: int, b: int) -> int:
        h = self._handles
        return int(self._call("nvmlDeviceGetTopologyCommonAncestor", h[a], h[b]))

    def max_nvlinks(self) -> int:
        return int(getattr(self._nv, "NVML_NVLINK_MAX_LINKS", 18))

    def nvlink_state(self, index: int, link: int) -> bool | None:
        # NOT_SUPPORTED (no NVLink) and INVALID_ARGUMENT (port index past the GPU's ports): None.
        state = self._optional("nvmlDeviceGetNvLinkState", self._handles[index], link)
        return None if state is None else int(state) == int(self._nv.NVML_FEATURE_ENABLED)

    def nvlink_remote_bus_id(self, index: int, link: int) -> str:
        info = self._call("nvmlDeviceGetNvLinkRemotePciInfo", self._handles[index], link)
        return str(info.busId)

    def nvlink_remote_type(self, index: int, link: int) -> int | None:
        kind = self._optional("nvmlDeviceGetNvLinkRemoteDeviceType", self._handles[index], link)
        return None if kind is None else int(kind)
