"""Read the live node through NVML (plus a few sysfs files) and build a :class:`NodeTopology`.

Where each fact comes from:

- NVML (``libnvidia-ml.so.1`` through nvidia-ml-py's ``pynvml``): GPU name, UUID, PCI bus id,
  total memory, compute capability, CPU affinity, the GPU's *own* NUMA node on coherent platforms
  (``nvmlDeviceGetNumaNodeId`` "only applies to platforms where the GPUs are NUMA nodes", i.e.
  GH200; it goes to ``Gpu.memory_numa``), the PCIe common ancestor of each GPU pair, the NVLink
  ports, and the driver / CUDA driver versions.
- sysfs, through an injectable reader: the NUMA node of the GPU's PCI function
  (``/sys/bus/pci/devices/<bus>/numa_node``, what the NVIDIA device plugin reports to the kubelet,
  so it becomes ``Gpu.numa``), the PCI class (GFD's ``gpu.mode`` reads the same file), the host's
  NUMA nodes (``/sys/devices/system/node``: CPUs, MemTotal, distances) and the DMI product name
  (GFD's default machine-type file).
- Not visible: NICs. NVML only knows NVIDIA GPUs (and NVSwitches); see ``NodeTopology.notes``.

NVLink: for each port up to ``NVML_NVLINK_MAX_LINKS`` whose state is enabled, the remote PCI bus
id is compared with the GPUs' bus ids. Links to a GPU are counted per peer. Links to anything else
that is (or may be) an NVSwitch are counted per GPU, and every GPU that reaches a switch joins one
NVSwitch domain where a pair gets ``NV<min(links of a, links of b)>``: what ``nvidia-smi topo -m``
prints on HGX systems. NVIDIA's go-gpuallocator only matches remote bus ids against GPUs and so
sees no NVLink at all on NVSwitch systems (shared/reference/gpuallocator.md).
"""

from __future__ import annotations

import re
import socket
from collections.abc import Sequence
from dataclasses import dataclass

from gpuplane.core.cpuset import parse_cpu_list
from gpuplane.core.ids import GpuIndex, GpuModelName, NumaId
from gpuplane.core.units import KIB, pcie_gbps
from gpuplane.topology.bandwidth import BandwidthModel
from gpuplane.topology.catalog import GpuModel, default_catalog
from gpuplane.topology.links import NVML_LEVEL_TO_CLASS, SELF, Link, LinkClass, nvlink
from gpuplane.topology.model import Gpu, NodeTopology, NumaKind, NumaNode
from gpuplane.topology.nvml_api import (
    NVLINK_REMOTE_SWITCH,
    NVLINK_REMOTE_UNKNOWN,
    DriverInfo,
    GpuFacts,
    NvmlApi,
    PynvmlApi,
    SysfsReader,
    read_sysfs,
    sysfs_bus_id,
)

# For products missing from the catalog: the commonest data-centre host link (Gen4 x16) and the
# NVLink 3/4 per-link rate (25 GB/s per direction). Stated defaults, flagged in the notes.
_FALLBACK_PCIE_GBPS = pcie_gbps(4, 16)
_FALLBACK_NVLINK_GBPS = 25.0

_NODE_ROOT = "/sys/devices/system/node"
_PCI_ROOT = "/sys/bus/pci/devices"
_DMI_PRODUCT = "/sys/class/dmi/id/product_name"
NIC_NOTE = (
    "NICs are not visible through NVML; save `nvidia-smi topo -m` output on the node (or use a "
    "preset) to see GPU-NIC paths"
)


@dataclass(frozen=True, slots=True)
class NodeDiscovery:
    topology: NodeTopology
    driver: DriverInfo
    gpus: tuple[GpuFacts, ...]


def _int_or_none(text: str | None) -> int | None:
    try:
        return int(text.strip()) if text is not None else None
    except ValueError:
        return None


def _read_gpu(api: NvmlApi, i: int, read: SysfsReader) -> GpuFacts:
    bus = api.pci_bus_id(i)
    pci_numa = _int_or_none(read(f"{_PCI_ROOT}/{sysfs_bus_id(bus)}/numa_node"))
    pci_class = read(f"{_PCI_ROOT}/{sysfs_bus_id(bus)}/class")
    return GpuFacts(
        index=i,
        name=api.name(i).strip(),
        uuid=api.uuid(i),
        pci_bus_id=bus,
        memory_total_bytes=api.memory_total_bytes(i),
        compute_capability=api.compute_capability(i),
        cpu_affinity=tuple(sorted(api.cpu_affinity(i))),
        # The kernel writes -1 when the firmware gives a device no NUMA node.
        pci_numa_node=pci_numa if pci_numa is not None and pci_numa >= 0 else None,
        gpu_numa_node=api.numa_node_id(i),
        pci_class=pci_class.strip() if pci_class else None,
    )


def _meminfo_bytes(text: str | None) -> int | None:
    m = re.search(r"MemTotal:\s+(\d+)\s*kB", text or "")
    return int(m.group(1)) * KIB if m else None


def _numa_from_gpus(gpus: Sequence[GpuFacts]) -> tuple[NumaNode, ...]:
    """Without sysfs: one node per PCI NUMA id the GPUs name, with their affinity CPUs."""
    ids = sorted({g.pci_numa_node for g in gpus if g.pci_numa_node is not None}) or [0]
    single = len(ids) == 1

    def cpus(nid: int) -> tuple[int, ...]:
        mine = (g for g in gpus if single or g.pci_numa_node == nid)
        return tuple(sorted({c for g in mine for c in g.cpu_affinity}))

    return tuple(NumaNode(id=NumaId(nid), cpus=cpus(nid)) for nid in ids)


def _read_numa(
    read: SysfsReader, gpus: Sequence[GpuFacts], notes: list[str]
) -> tuple[tuple[NumaNode, ...], tuple[tuple[int, ...], ...] | None]:
    online = read(f"{_NODE_ROOT}/online")
    if not online or not online.strip():
        notes.append("NUMA nodes inferred from GPU affinity: /sys/devices/system/node unreadable")
        return _numa_from_gpus(gpus), None
    ids = list(parse_cpu_list(online))
    gpu_memory = {g.gpu_numa_node for g in gpus if g.gpu_numa_node is not None}
    nodes_list: list[NumaNode] = []
    rows: list[tuple[int, ...]] = []
    for nid in ids:
        cpus = parse_cpu_list(read(f"{_NODE_ROOT}/node{nid}/cpulist") or "")
        kind = NumaKind.GPU_MEMORY if nid in gpu_memory and not cpus else NumaKind.CPU
        mem = _meminfo_bytes(read(f"{_NODE_ROOT}/node{nid}/meminfo"))
        nodes_list.append(NumaNode(id=NumaId(nid), cpus=cpus, memory_bytes=mem, kind=kind))
        dist = (read(f"{_NODE_ROOT}/node{nid}/distance") or "").split()
        rows.append(tuple(int(d) for d in dist if d.isdigit()))
    # The kernel prints one distance per online node, in node order.
    complete = all(len(r) == len(ids) for r in rows)
    if not complete:
        notes.append("NUMA distances unreadable or incomplete in sysfs; none recorded")
    return tuple(nodes_list), tuple(rows) if complete else None


def _gpu_numa(g: GpuFacts, nodes: Sequence[NumaNode]) -> NumaId | None:
    ids = {n.id for n in nodes}
    if g.pci_numa_node is not None and g.pci_numa_node in ids:
        return NumaId(g.pci_numa_node)
    mine = set(g.cpu_affinity)
    overlap = sorted((-len(mine & set(n.cpus)), n.id) for n in nodes if n.cpus)
    if overlap and overlap[0][0] < 0:
        return overlap[0][1]
    cpu_nodes = [n.id for n in nodes if n.kind is NumaKind.CPU]
    return cpu_nodes[0] if len(cpu_nodes) == 1 else None


def _scan_nvlinks(
    api: NvmlApi, gpus: Sequence[GpuFacts], notes: list[str]
) -> tuple[list[list[int]], list[int]]:
    """Per-peer direct link counts and per-GPU switch link counts."""
    n = len(gpus)
    by_bus = {sysfs_bus_id(g.pci_bus_id): g.index for g in gpus}
    direct = [[0] * n for _ in range(n)]
    switch = [0] * n
    for i in range(n):
        other = 0
        for link in range(api.max_nvlinks()):
            if not api.nvlink_state(i, link):
                continue
            peer = by_bus.get(sysfs_bus_id(api.nvlink_remote_bus_id(i, link)))
            kind = api.nvlink_remote_type(i, link)
            if peer is not None:
                direct[i][peer] += 1 if peer != i else 0
            elif kind in (None, NVLINK_REMOTE_SWITCH, NVLINK_REMOTE_UNKNOWN):
                # Not a GPU bus id: an NVSwitch (always, when the binding cannot say).
                switch[i] += 1
            else:
                other += 1  # an IBM NPU, or a GPU NVML does not show (container visibility)
        if other:
            notes.append(f"GPU{i}: {other} NVLink(s) to devices other than visible GPUs/switches")
    return direct, switch


def _link_matrix(
    api: NvmlApi, gpus: Sequence[GpuFacts], notes: list[str]
) -> tuple[list[list[Link]], bool]:
    n = len(gpus)
    direct, switch = _scan_nvlinks(api, gpus, notes)
    rows = [[SELF] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            if direct[i][j] != direct[j][i]:
                notes.append(
                    f"GPU{i}-GPU{j}: {direct[i][j]} vs {direct[j][i]} NVLinks seen from each "
                    "end; the smaller count is kept"
                )
            count = min(direct[i][j], direct[j][i]) + min(switch[i], switch[j])
            if count:
                link = nvlink(count)
            else:
                level = api.common_ancestor(i, j)
                cls = NVML_LEVEL_TO_CLASS.get(level)
                if cls is None:
                    notes.append(
                        f"GPU{i}-GPU{j}: unknown NVML topology level {level}, taken as SYS"
                    )
                link = Link(cls if cls is not None else LinkClass.SYS)
            rows[i][j] = rows[j][i] = link
    return rows, any(switch)


def _make_gpu(f: GpuFacts, model: GpuModel | None, nodes: Sequence[NumaNode]) -> Gpu:
    numa = _gpu_numa(f, nodes)
    mine = set(f.cpu_affinity)
    near = tuple(n.id for n in nodes if mine & set(n.cpus))
    return Gpu(
        index=GpuIndex(f.index),
        model=GpuModelName(model.name if model else f.name),
        numa=numa,
        numa_affinity=near or ((numa,) if numa is not None else ()),
        cpu_affinity=f.cpu_affinity,
        memory_numa=NumaId(f.gpu_numa_node) if f.gpu_numa_node is not None else None,
        pcie_gbps=model.pcie_gbps if model else None,
        uuid=f.uuid,
        pci_bus_id=f.pci_bus_id,
    )


def _bandwidth(
    models: Sequence[GpuModel | None], links: list[list[Link]]
) -> tuple[tuple[float, ...], ...]:
    # A pair runs at the slower end's rates; uncatalogued GPUs get the stated fallbacks.
    rates = [
        (m.nvlink_gbps_per_link, m.pcie_gbps) if m else (_FALLBACK_NVLINK_GBPS, _FALLBACK_PCIE_GBPS)
        for m in models
    ]
    n = len(models)
    return tuple(
        tuple(
            BandwidthModel(
                nvlink_gbps_per_link=min(rates[i][0], rates[j][0]),
                pcie_gbps=min(rates[i][1], rates[j][1]),
            ).for_link(links[i][j])
            for j in range(n)
        )
        for i in range(n)
    )


def _build_topology(
    name: str,
    facts: Sequence[GpuFacts],
    nodes: tuple[NumaNode, ...],
    distances: tuple[tuple[int, ...], ...] | None,
    links: list[list[Link]],
    *,
    nvswitch: bool,
    machine: str | None,
    description: str,
    notes: list[str],
) -> NodeTopology:
    catalog = default_catalog()
    models = [catalog.find(f.name) for f in facts]
    for f, model in zip(facts, models, strict=True):
        if model is None:
            notes.append(
                f"GPU{f.index}: {f.name!r} is not in the GPU catalog; kept under its NVML name, "
                f"bandwidths assume PCIe Gen4 x16 and {_FALLBACK_NVLINK_GBPS} GB/s per NVLink"
            )
    return NodeTopology(
        name=name,
        gpus=tuple(_make_gpu(f, m, nodes) for f, m in zip(facts, models, strict=True)),
        nics=(),
        numa_nodes=nodes,
        links=tuple(tuple(row) for row in links),
        bandwidth_gbps=_bandwidth(models, links),
        numa_distances=distances,
        nvswitch=nvswitch,
        machine=machine,
        source="nvml",
        description=description,
        notes=(NIC_NOTE, *notes),
    )


def discover(
    api: NvmlApi | None = None, *, name: str | None = None, read: SysfsReader = read_sysfs
) -> NodeDiscovery:
    """Read this node; raise UnavailableError when NVML cannot be loaded (no driver)."""
    nvml = api if api is not None else PynvmlApi()
    nvml.init()
    notes: list[str] = []
    try:
        driver = DriverInfo(nvml.driver_version(), nvml.cuda_driver_version())
        facts = tuple(_read_gpu(nvml, i, read) for i in range(nvml.device_count()))
        links, switched = _link_matrix(nvml, facts, notes)
    finally:
        nvml.shutdown()
    if switched:
        notes.append(
            "GPUs that reach an NVSwitch form one domain; a pair is NV<min of their switch links>"
        )
    nodes, distances = _read_numa(read, facts, notes)
    products = sorted({f.name for f in facts})
    topo = _build_topology(
        name or socket.gethostname(),
        facts,
        nodes,
        distances,
        links,
        nvswitch=switched,
        machine=(read(_DMI_PRODUCT) or "").strip() or None,
        description=(
            f"{len(facts)} GPU(s) ({', '.join(products) or 'none'}) read through NVML; driver "
            f"{driver.driver_version}, CUDA {driver.cuda_major}.{driver.cuda_minor}"
        ),
        notes=notes,
    )
    return NodeDiscovery(topology=topo, driver=driver, gpus=facts)


def discover_node(
    api: NvmlApi | None = None, *, name: str | None = None, read: SysfsReader = read_sysfs
) -> tuple[NodeTopology, DriverInfo]:
    """The hardware model of :func:`discover` and, alongside, the driver versions GFD needs."""
    found = discover(api, name=name, read=read)
    return found.topology, found.driver
