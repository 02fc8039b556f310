"""The node hardware model: NUMA nodes, PCIe bridges, GPUs, NICs and the pairwise link matrix.

A :class:`NodeTopology` is built either from a hardware description (presets: the PCIe tree and
NVLink fabric are known, so classes and bandwidths are derived, see ``build.py``) or from a
``nvidia-smi topo -m`` matrix / NVML (only the classes are known; bandwidths come from
``bandwidth.py``). Either way the result carries, for every pair of devices, the link class that
``nvidia-smi topo -m`` would print and the per-direction path bandwidth in GB/s.

Devices are ordered GPUs first (by index), then NICs (by index), exactly like the columns of
``nvidia-smi topo -m``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from gpuplane.core.ids import BridgeId, GpuIndex, GpuModelName, NicIndex, NumaId
from gpuplane.topology.links import Link, LinkClass


class NumaKind(StrEnum):
    CPU = "cpu"
    # Coherent GPU memory exposed as a CPU-less NUMA node (GH200 "GPU NUMA ID").
    GPU_MEMORY = "gpu-memory"


class BridgeKind(StrEnum):
    HOST_BRIDGE = "host-bridge"
    SWITCH = "switch"


@dataclass(frozen=True, slots=True)
class NumaNode:
    id: NumaId
    cpus: tuple[int, ...] = ()
    memory_bytes: int | None = None
    kind: NumaKind = NumaKind.CPU
    socket: int | None = None


@dataclass(frozen=True, slots=True)
class PcieBridge:
    """A PCIe host bridge (root complex / root port) or a PCIe switch below one."""

    id: BridgeId
    kind: BridgeKind
    numa: NumaId
    parent: BridgeId | None = None
    # Per-direction bandwidth of the link to the parent; None for host bridges.
    uplink_gbps: float | None = None


@dataclass(frozen=True, slots=True)
class Gpu:
    index: GpuIndex
    model: GpuModelName
    numa: NumaId | None = None
    numa_affinity: tuple[NumaId, ...] = ()
    cpu_affinity: tuple[int, ...] = ()
    memory_numa: NumaId | None = None
    parent: BridgeId | None = None
    pcie_gbps: float | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None


@dataclass(frozen=True, slots=True)
class Nic:
    index: NicIndex
    name: str
    numa: NumaId | None = None
    parent: BridgeId | None = None
    speed_gbit: float | None = None
    pcie_gbps: float | None = None


@dataclass(frozen=True, slots=True)
class NodeTopology:
    """One node's hardware. ``links`` and ``bandwidth_gbps`` are square over gpus + nics."""

    name: str
    gpus: tuple[Gpu, ...]
    nics: tuple[Nic, ...]
    numa_nodes: tuple[NumaNode, ...]
    links: tuple[tuple[Link, ...], ...]
    bandwidth_gbps: tuple[tuple[float, ...], ...]
    bridges: tuple[PcieBridge, ...] = ()
    numa_distances: tuple[tuple[int, ...], ...] | None = None
    nvswitch: bool = False
    machine: str | None = None
    source: str = ""
    description: str = ""
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        n = len(self.gpus) + len(self.nics)
        if len(self.links) != n or any(len(row) != n for row in self.links):
            raise ValueError(f"{self.name}: link matrix must be {n}x{n}")
        if len(self.bandwidth_gbps) != n or any(len(r) != n for r in self.bandwidth_gbps):
            raise ValueError(f"{self.name}: bandwidth matrix must be {n}x{n}")
        for i in range(n):
            if self.links[i][i].cls is not LinkClass.X:
                raise ValueError(f"{self.name}: device {i} is not X to itself")
            for j in range(i + 1, n):
                if self.links[i][j] != self.links[j][i]:
                    raise ValueError(f"{self.name}: link matrix not symmetric at ({i},{j})")
        if [g.index for g in self.gpus] != list(range(len(self.gpus))):
            raise ValueError(f"{self.name}: GPU indices must be 0..{len(self.gpus) - 1} in order")
        if [c.index for c in self.nics] != list(range(len(self.nics))):
            raise ValueError(f"{self.name}: NIC indices must be 0..{len(self.nics) - 1} in order")

    # ----- devices -----
    @property
    def num_gpus(self) -> int:
        return len(self.gpus)

    def device_names(self) -> list[str]:
        """Column names as ``nvidia-smi topo -m`` prints them (GPU0.., NIC0..)."""
        return [f"GPU{g.index}" for g in self.gpus] + [f"NIC{c.index}" for c in self.nics]

    def nic_position(self, nic: int) -> int:
        return len(self.gpus) + nic

    @property
    def gpu_models(self) -> tuple[GpuModelName, ...]:
        return tuple(sorted({g.model for g in self.gpus}))

    # ----- links -----
    def gpu_link(self, a: int, b: int) -> Link:
        return self.links[a][b]

    def gpu_bandwidth_gbps(self, a: int, b: int) -> float:
        return self.bandwidth_gbps[a][b]

    def gpu_nic_link(self, gpu: int, nic: int) -> Link:
        return self.links[gpu][self.nic_position(nic)]

    def gpu_link_labels(self) -> list[list[str]]:
        """The GPU x GPU sub-matrix as strings like ``"NV18"`` and ``"SYS"``."""
        g = len(self.gpus)
        return [[self.links[i][j].label for j in range(g)] for i in range(g)]

    def link_labels(self) -> list[list[str]]:
        return [[cell.label for cell in row] for row in self.links]

    def nearest_nics(self, gpu: int) -> list[int]:
        """NIC indices with the closest PCIe path to ``gpu`` (ties kept, sorted)."""
        if not self.nics:
            return []
        ranks = [self.gpu_nic_link(gpu, n.index).rank for n in self.nics]
        best = min(ranks)
        return [n.index for n, r in zip(self.nics, ranks, strict=True) if r == best]

    # ----- NUMA -----
    def numa_ids(self) -> list[NumaId]:
        return [n.id for n in self.numa_nodes]

    def cpu_numa_nodes(self) -> tuple[NumaNode, ...]:
        return tuple(n for n in self.numa_nodes if n.kind is NumaKind.CPU)

    def gpus_on_numa(self, numa: NumaId) -> list[int]:
        return [g.index for g in self.gpus if g.numa == numa]

    def numa_distance(self, a: NumaId, b: NumaId) -> int | None:
        if self.numa_distances is None:
            return None
        ids = self.numa_ids()
        return self.numa_distances[ids.index(a)][ids.index(b)]

    def nvlink_islands(self) -> list[list[int]]:
        """Connected components of GPUs over NVLink (an NVSwitch domain is one island)."""
        seen: set[int] = set()
        islands: list[list[int]] = []
        for start in range(len(self.gpus)):
            if start in seen:
                continue
            stack, comp = [start], []
            seen.add(start)
            while stack:
                cur = stack.pop()
                comp.append(cur)
                for nxt in range(len(self.gpus)):
                    if nxt not in seen and self.links[cur][nxt].is_nvlink:
                        seen.add(nxt)
                        stack.append(nxt)
            islands.append(sorted(comp))
        return islands
