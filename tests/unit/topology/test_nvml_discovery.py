from __future__ import annotations

import ctypes.util
import sys
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from gpuplane.core.errors import UnavailableError
from gpuplane.core.units import GIB, MIB
from gpuplane.topology.model import NumaKind
from gpuplane.topology.nvml_api import (
    NVLINK_REMOTE_GPU,
    NVLINK_REMOTE_SWITCH,
    PynvmlApi,
    cpus_from_mask,
    sysfs_bus_id,
)
from gpuplane.topology.nvml_discovery import NIC_NOTE, discover, discover_node

Links = list[tuple[str, int | None]]


@dataclass
class FakeGpu:
    name: str
    bus: str
    memory_bytes: int
    cc: tuple[int, int]
    cpus: tuple[int, ...]
    numa_id: int | None = None
    nvlinks: Links = field(default_factory=list)


class FakeNvml:
    """An NvmlApi with fixed answers; ``level(a, b)`` gives nvmlDeviceGetTopologyCommonAncestor."""

    def __init__(self, gpus: list[FakeGpu], level: Any, *, max_links: int = 18) -> None:
        self.gpus = gpus
        self.level = level
        self.max_links = max_links
        self.calls: list[str] = []

    def init(self) -> None:
        self.calls.append("init")

    def shutdown(self) -> None:
        self.calls.append("shutdown")

    def driver_version(self) -> str:
        return "550.54.15"

    def cuda_driver_version(self) -> int:
        return 12040

    def device_count(self) -> int:
        return len(self.gpus)

    def name(self, index: int) -> str:
        return self.gpus[index].name

    def uuid(self, index: int) -> str:
        return f"GPU-0000000{index}-aaaa-bbbb-cccc-dddddddddddd"

    def pci_bus_id(self, index: int) -> str:
        return self.gpus[index].bus

    def memory_total_bytes(self, index: int) -> int:
        return self.gpus[index].memory_bytes

    def compute_capability(self, index: int) -> tuple[int, int]:
        return self.gpus[index].cc

    def cpu_affinity(self, index: int) -> tuple[int, ...]:
        return self.gpus[index].cpus

    def numa_node_id(self, index: int) -> int | None:
        return self.gpus[index].numa_id

    def common_ancestor(self, a: int, b: int) -> int:
        return int(self.level(a, b))

    def max_nvlinks(self) -> int:
        return self.max_links

    def nvlink_state(self, index: int, link: int) -> bool | None:
        return True if link < len(self.gpus[index].nvlinks) else None

    def nvlink_remote_bus_id(self, index: int, link: int) -> str:
        return self.gpus[index].nvlinks[link][0]

    def nvlink_remote_type(self, index: int, link: int) -> int | None:
        return self.gpus[index].nvlinks[link][1]


def two_socket_sysfs(gpus: list[FakeGpu], *, cpus_per_node: int = 56) -> dict[str, str]:
    files = {
        "/sys/devices/system/node/online": "0-1\n",
        "/sys/devices/system/node/node0/distance": "10 21\n",
        "/sys/devices/system/node/node1/distance": "21 10\n",
        "/sys/devices/system/node/node0/cpulist": f"0-{cpus_per_node - 1}\n",
        "/sys/devices/system/node/node1/cpulist": f"{cpus_per_node}-{2 * cpus_per_node - 1}\n",
        "/sys/devices/system/node/node0/meminfo": "Node 0 MemTotal:       1056000000 kB\n",
        "/sys/devices/system/node/node1/meminfo": "Node 1 MemTotal:       1056000000 kB\n",
        "/sys/class/dmi/id/product_name": "DGX H100\n",
    }
    for g in gpus:
        dev = f"/sys/bus/pci/devices/{sysfs_bus_id(g.bus)}"
        files[f"{dev}/numa_node"] = "0\n" if g.cpus[0] < cpus_per_node else "1\n"
        files[f"{dev}/class"] = "0x030200\n"
    return files


H100_BUSES = [f"00000000:{b}:00.0" for b in ("18", "2A", "3A", "5D", "9A", "AB", "BA", "DB")]
SWITCH_BUSES = [f"00000000:{b}:00.0" for b in ("05", "06", "07", "08")]


def socket_level(a: int, b: int) -> int:
    return 40 if a // 4 == b // 4 else 50  # NODE within a socket, SYS across


def hgx_h100(*, remote_type: int | None = NVLINK_REMOTE_SWITCH, links: int = 18) -> list[FakeGpu]:
    gpus = []
    for i, bus in enumerate(H100_BUSES):
        # 18 NVLink-4 ports spread over the 4 NVSwitch chips (5+4+4+5 on HGX H100).
        ports = [SWITCH_BUSES[p % 4] for p in range(links if i == 0 else 18)]
        cpus = tuple(range(56)) if i < 4 else tuple(range(56, 112))
        gpus.append(
            FakeGpu(
                name="NVIDIA H100 80GB HBM3",
                bus=bus,
                memory_bytes=81559 * MIB,
                cc=(9, 0),
                cpus=cpus,
                nvlinks=[(s, remote_type) for s in ports],
            )
        )
    return gpus


def run(gpus: list[FakeGpu], level: Any, files: dict[str, str], **kw: Any) -> Any:
    return discover(FakeNvml(gpus, level, **kw), name="node-a", read=files.get)


def test_hgx_h100_nvswitch_gives_nv18_everywhere() -> None:
    gpus = hgx_h100()
    found = run(gpus, socket_level, two_socket_sysfs(gpus))
    topo = found.topology
    assert topo.num_gpus == 8 and topo.nvswitch
    assert all(topo.gpu_link(a, b).label == "NV18" for a in range(8) for b in range(8) if a != b)
    assert topo.gpu_bandwidth_gbps(0, 7) == 18 * 25.0
    assert {g.model for g in topo.gpus} == {"H100-80GB-SXM"}
    assert [g.numa for g in topo.gpus] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert topo.gpus[5].cpu_affinity == tuple(range(56, 112))
    assert topo.gpus[0].pci_bus_id == H100_BUSES[0] and topo.gpus[0].uuid is not None
    assert topo.numa_distances == ((10, 21), (21, 10))
    assert topo.numa_nodes[1].memory_bytes == 1056000000 * 1024
    assert topo.machine == "DGX H100" and topo.source == "nvml" and topo.name == "node-a"
    assert NIC_NOTE in topo.notes and topo.nics == ()
    assert found.driver.cuda_major == 12 and found.driver.cuda_minor == 4
    assert found.gpus[0].memory_mib == 81559 and found.gpus[0].pci_class == "0x030200"


def test_discover_node_returns_the_driver_alongside() -> None:
    topo, driver = discover_node(FakeNvml(hgx_h100(), socket_level), name="n", read=lambda _p: None)
    assert topo.num_gpus == 8 and driver.driver_version == "550.54.15"


def test_switch_without_remote_type_in_binding_is_still_a_switch() -> None:
    gpus = hgx_h100(remote_type=None)
    topo = run(gpus, socket_level, two_socket_sysfs(gpus)).topology
    assert topo.gpu_link(3, 4).label == "NV18"


def test_switch_domain_pairs_get_the_smaller_link_count() -> None:
    gpus = hgx_h100(links=17)  # GPU0 has one port down
    topo = run(gpus, socket_level, two_socket_sysfs(gpus)).topology
    assert topo.gpu_link(0, 5).label == "NV17"
    assert topo.gpu_link(1, 5).label == "NV18"


def test_nvml_calls_are_bracketed_by_init_and_shutdown() -> None:
    api = FakeNvml(hgx_h100(), socket_level)
    discover(api, name="n", read=lambda _p: None)
    assert api.calls == ["init", "shutdown"]


DGX1_MESH = [
    ["X", "NV1", "NV1", "NV2", "NV2", "SYS", "SYS", "SYS"],
    ["NV1", "X", "NV2", "NV1", "SYS", "NV2", "SYS", "SYS"],
    ["NV1", "NV2", "X", "NV2", "SYS", "SYS", "NV1", "SYS"],
    ["NV2", "NV1", "NV2", "X", "SYS", "SYS", "SYS", "NV1"],
    ["NV2", "SYS", "SYS", "SYS", "X", "NV1", "NV1", "NV2"],
    ["SYS", "NV2", "SYS", "SYS", "NV1", "X", "NV2", "NV1"],
    ["SYS", "SYS", "NV1", "SYS", "NV1", "NV2", "X", "NV2"],
    ["SYS", "SYS", "SYS", "NV1", "NV2", "NV1", "NV2", "X"],
]


def dgx1_v100() -> list[FakeGpu]:
    """shared/data/topologies/dgx1-v100-hybrid-cube-mesh.txt: direct GPU-GPU NVLinks."""
    buses = [f"0000:{b}:00.0" for b in ("06", "07", "0A", "0B", "85", "86", "89", "8A")]
    gpus = []
    for i, row in enumerate(DGX1_MESH):
        ports: Links = []
        for j, cell in enumerate(row):
            if cell.startswith("NV"):
                ports += [(buses[j], NVLINK_REMOTE_GPU)] * int(cell[2:])
        cpus = tuple(range(12)) + tuple(range(24, 36)) if i < 4 else tuple(range(12, 24))
        gpus.append(
            FakeGpu("Tesla V100-SXM2-16GB", buses[i], 16384 * MIB, (7, 0), cpus, None, ports)
        )
    return gpus


def test_dgx1_direct_mesh_matches_topo_m() -> None:
    gpus = dgx1_v100()
    files = {
        "/sys/devices/system/node/online": "0-1",
        "/sys/devices/system/node/node0/cpulist": "0-11,24-35",
        "/sys/devices/system/node/node1/cpulist": "12-23,36-47",
    }
    topo = run(gpus, socket_level, files, max_links=6).topology
    assert topo.gpu_link_labels() == DGX1_MESH
    assert not topo.nvswitch
    assert topo.gpu_bandwidth_gbps(0, 3) == 2 * 25.0
    # No numa_node files: the NUMA node comes from the CPU affinity.
    assert [g.numa for g in topo.gpus] == [0] * 4 + [1] * 4
    assert topo.numa_distances is None and any("distances" in n for n in topo.notes)


def test_pcie_only_box_uses_the_common_ancestor_levels() -> None:
    levels = {(0, 1): 40, (2, 3): 40}
    gpus = [
        FakeGpu("NVIDIA L40S", f"00000000:{b}:00.0", 46068 * MIB, (8, 9), (i // 2 * 96,))
        for i, b in enumerate(("01", "41", "81", "C1"))
    ]
    files = two_socket_sysfs(gpus, cpus_per_node=96)
    topo = run(gpus, lambda a, b: levels.get((a, b), 50), files).topology
    assert topo.gpu_link_labels()[0] == ["X", "NODE", "SYS", "SYS"]
    assert topo.gpu_link(2, 3).label == "NODE" and not topo.nvswitch
    assert topo.gpu_bandwidth_gbps(0, 1) == topo.gpus[0].pcie_gbps


def test_unknown_product_is_kept_with_a_note() -> None:
    gpus = [FakeGpu("NVIDIA Future 1", "00000000:01:00.0", 10 * GIB, (12, 0), (0,))]
    topo = run(gpus, socket_level, {}).topology
    assert topo.gpus[0].model == "NVIDIA Future 1" and topo.gpus[0].pcie_gbps is None
    assert any("not in the GPU catalog" in n for n in topo.notes)
    # No sysfs at all: one NUMA node built from the GPU's affinity.
    assert [n.id for n in topo.numa_nodes] == [0] and topo.gpus[0].numa == 0


def test_gh200_gpu_memory_numa_node() -> None:
    gpus = [FakeGpu("NVIDIA GH200 480GB", "00000009:01:00.0", 97871 * MIB, (9, 0), (0,), 1)]
    files = {
        "/sys/devices/system/node/online": "0-1",
        "/sys/devices/system/node/node0/cpulist": "0-71",
        "/sys/devices/system/node/node1/cpulist": "\n",
        "/sys/devices/system/node/node1/meminfo": "Node 1 MemTotal:  100000000 kB",
        "/sys/bus/pci/devices/0009:01:00.0/numa_node": "0",
    }
    topo = run(gpus, socket_level, files).topology
    assert topo.gpus[0].numa == 0 and topo.gpus[0].memory_numa == 1
    assert [n.kind for n in topo.numa_nodes] == [NumaKind.CPU, NumaKind.GPU_MEMORY]


def test_helpers() -> None:
    assert cpus_from_mask([0b1011, 1]) == (0, 1, 3, 64)
    assert sysfs_bus_id("00000000:AB:00.0") == "0000:ab:00.0"
    assert sysfs_bus_id("0000:1b:00.1") == "0000:1b:00.1"


NO_LIB = ctypes.util.find_library("nvidia-ml") is None


@pytest.mark.skipif(not NO_LIB, reason="this machine has an NVIDIA driver")
def test_real_api_without_driver_is_a_clear_error() -> None:
    with pytest.raises(UnavailableError) as err:
        discover_node()
    text = str(err.value)
    assert "libnvidia-ml.so.1" in text and "nvidia-smi topo -m" in text and "preset" in text


def test_missing_binding_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)
    with pytest.raises(UnavailableError, match="nvidia-ml-py"):
        PynvmlApi()


def test_driver_not_loaded_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import pynvml

    def fail() -> None:
        raise pynvml.NVMLError(pynvml.NVML_ERROR_DRIVER_NOT_LOADED)

    monkeypatch.setattr(pynvml, "nvmlInit", fail)
    with pytest.raises(UnavailableError, match=r"Driver Not Loaded.*nvidia-smi topo -m"):
        discover_node(name="n")


def test_pynvml_wrapper_against_patched_binding(monkeypatch: pytest.MonkeyPatch) -> None:
    """PynvmlApi's calls and error mapping, with pynvml's functions replaced (no driver here)."""
    import pynvml

    def nvlink_state(h: int, link: int) -> int:
        raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)

    def numa(h: int) -> int:
        raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)

    fakes: dict[str, Any] = {
        "nvmlInit": lambda: None,
        "nvmlShutdown": lambda: None,
        "nvmlDeviceGetCount": lambda: 2,
        "nvmlDeviceGetHandleByIndex": lambda i: i,
        "nvmlSystemGetDriverVersion": lambda: "570.86.15",
        "nvmlSystemGetCudaDriverVersion": lambda: 12080,
        "nvmlDeviceGetName": lambda h: "NVIDIA A10",
        "nvmlDeviceGetUUID": lambda h: f"GPU-{h}",
        "nvmlDeviceGetPciInfo": lambda h: SimpleNamespace(busId=f"00000000:0{h + 1}:00.0"),
        "nvmlDeviceGetMemoryInfo": lambda h: SimpleNamespace(total=23028 * MIB),
        "nvmlDeviceGetCudaComputeCapability": lambda h: (8, 6),
        "nvmlDeviceGetCpuAffinity": lambda h, n: [0xFF] + [0] * (n - 1),
        "nvmlDeviceGetNumaNodeId": numa,
        "nvmlDeviceGetTopologyCommonAncestor": lambda a, b: 10,
        "nvmlDeviceGetNvLinkState": nvlink_state,
    }
    for fn, fake in fakes.items():
        monkeypatch.setattr(pynvml, fn, fake)
    found = discover(PynvmlApi(), name="n", read=lambda _p: None)
    assert found.driver.driver_version == "570.86.15" and found.driver.cuda_minor == 8
    assert found.topology.gpu_link(0, 1).label == "PIX"
    assert found.topology.gpus[1].cpu_affinity == tuple(range(8))
    assert found.topology.gpus[0].memory_numa is None
    assert {g.model for g in found.topology.gpus} == {"A10"}
