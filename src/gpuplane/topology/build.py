"""Derive a NodeTopology from a hardware description: the ``topo -m`` classes and bandwidths.

Link classes follow the ``nvidia-smi topo -m`` legend, read off the PCIe tree:

- PIX: both devices hang off the same bridge (at most one bridge between them);
- PXB: their lowest common ancestor is a switch, but not a parent they share directly;
- PHB: their lowest common ancestor is the host bridge;
- NODE: different host bridges of the same NUMA node;
- SYS: host bridges on different NUMA nodes.

Two GPUs joined by NVLink (a mesh pair, or both on an NVSwitch fabric) print ``NV<n>`` instead.

Bandwidths are GB/s per direction. ``NV<n>`` is n x the per-link rate of the slower GPU model.
A PCIe path is as fast as its slowest link: both devices' own links and every switch uplink it
climbs. NODE is further capped by ``intra_socket_gbps`` (when given). SYS across sockets is capped
by ``inter_socket_gbps``. SYS between NUMA nodes of one socket (AMD NPS2/NPS4) never leaves the
package, so ``intra_socket_gbps`` caps it instead. The diagonal is ``X`` and 0.0.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.core.cpuset import parse_cpu_list
from gpuplane.core.ids import BridgeId, GpuIndex, GpuModelName, NicIndex, NumaId
from gpuplane.core.units import GIB
from gpuplane.topology.catalog import GpuModel
from gpuplane.topology.hardware_checks import LOCAL_DISTANCE
from gpuplane.topology.hardware_spec import (
    DEFAULT_REMOTE_DISTANCE,
    BridgeSpec,
    GpuSpec,
    HardwareSpec,
    NicSpec,
    NumaNodeSpec,
    PcieLinkSpec,
)
from gpuplane.topology.links import SELF, Link, LinkClass, nvlink
from gpuplane.topology.model import (
    BridgeKind,
    Gpu,
    Nic,
    NodeTopology,
    NumaKind,
    NumaNode,
    PcieBridge,
)


@dataclass(frozen=True, slots=True)
class _Endpoint:
    """A GPU or NIC as the path rules see it."""

    chain: tuple[str, ...]  # bridge ids from the device's parent up to its host bridge
    link_gbps: float  # the device's own link, per direction
    numa: int  # NUMA node of its host bridge
    socket: int
    gpu: int | None = None  # GPU index, None for NICs


@dataclass(frozen=True, slots=True)
class _Tree:
    parent: dict[str, str | None]
    uplink_gbps: dict[str, float]  # switches only
    host_numa: dict[str, int]  # every bridge -> the NUMA node of its host bridge

    def chain(self, bridge: str) -> tuple[str, ...]:
        out = [bridge]
        while (up := self.parent[out[-1]]) is not None:
            out.append(up)
        return tuple(out)


def build_topology(spec: HardwareSpec, *, source: str) -> NodeTopology:
    """The node ``spec`` describes, with every pairwise link class and bandwidth derived."""
    tree = _tree(spec)
    socket_of = {n.id: n.socket for n in spec.numa_nodes}
    models = {g.index: spec.model_of(g) for g in spec.gpus}
    gpu_specs = sorted(spec.gpus, key=lambda g: g.index)
    gpu_ends = [_gpu_endpoint(g, models[g.index], tree, socket_of) for g in gpu_specs]
    nic_ends = [_nic_endpoint(n, spec, tree, socket_of) for n in spec.nics]
    endpoints = gpu_ends + nic_ends  # nvidia-smi's column order: GPUs, then NICs
    nv_counts = _nvlink_counts(spec, models)
    n = len(endpoints)
    links: list[list[Link]] = [[SELF] * n for _ in range(n)]
    gbps: list[list[float]] = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            link, bw = _pair(endpoints[i], endpoints[j], spec, tree, nv_counts, models)
            links[i][j] = links[j][i] = link
            gbps[i][j] = gbps[j][i] = bw
    cpus = {node.id: parse_cpu_list(node.cpus) for node in spec.numa_nodes}
    return NodeTopology(
        name=spec.name,
        gpus=tuple(
            _gpu(g, models[g.index], e, cpus) for g, e in zip(gpu_specs, gpu_ends, strict=True)
        ),
        nics=tuple(
            _nic(k, nic, e) for k, (nic, e) in enumerate(zip(spec.nics, nic_ends, strict=True))
        ),
        numa_nodes=tuple(_numa_node(node, cpus[node.id]) for node in spec.numa_nodes),
        links=tuple(tuple(row) for row in links),
        bandwidth_gbps=tuple(tuple(row) for row in gbps),
        bridges=tuple(_bridge(b, tree) for b in spec.bridges),
        numa_distances=_distances(spec),
        nvswitch=spec.nvlink.fabric == "nvswitch",
        machine=spec.machine,
        source=source,
        description=spec.description,
        notes=tuple(f"source: {s}" for s in spec.sources)
        + tuple(f"assumption: {a}" for a in spec.assumptions),
    )


# ----- the PCIe tree -----


def _tree(spec: HardwareSpec) -> _Tree:
    parent = {b.id: b.parent for b in spec.bridges}
    uplink: dict[str, float] = {}
    for b in spec.bridges:
        if b.kind == "switch":
            uplink[b.id] = _link_gbps(b.pcie, spec.pcie)
    host_numa = {b.id: b.numa for b in spec.bridges if b.numa is not None}
    tree = _Tree(parent=parent, uplink_gbps=uplink, host_numa=host_numa)
    # Switches inherit the NUMA node of the host bridge at the top of their chain.
    for b in spec.bridges:
        host_numa[b.id] = host_numa[tree.chain(b.id)[-1]]
    return tree


def _link_gbps(own: PcieLinkSpec | None, default: PcieLinkSpec | None) -> float:
    link = own or default
    if link is None:  # hardware_checks guarantees one of them; keep mypy and readers honest
        raise ValueError("a PCIe link without generation and width")
    return link.gbps


def _gpu_endpoint(
    gpu: GpuSpec, model: GpuModel, tree: _Tree, socket_of: dict[int, int]
) -> _Endpoint:
    if gpu.host_link == "c2c" and model.c2c_gbps_bidir is not None:
        # NVLink-C2C to the Grace CPU: 450 GB/s per direction (topology.md, GH200).
        link = model.c2c_gbps_bidir / 2
    else:
        link = gpu.pcie.gbps if gpu.pcie is not None else model.pcie_gbps
    numa = tree.host_numa[gpu.parent]
    return _Endpoint(tree.chain(gpu.parent), link, numa, socket_of[numa], gpu.index)


def _nic_endpoint(
    nic: NicSpec, spec: HardwareSpec, tree: _Tree, socket_of: dict[int, int]
) -> _Endpoint:
    numa = tree.host_numa[nic.parent]
    link = _link_gbps(nic.pcie, spec.pcie)
    return _Endpoint(tree.chain(nic.parent), link, numa, socket_of[numa])


def _pcie_path(a: _Endpoint, b: _Endpoint, spec: HardwareSpec, tree: _Tree) -> tuple[Link, float]:
    """Class and per-direction bandwidth of the PCIe path between two devices."""
    in_b = set(b.chain)
    lca = next((bridge for bridge in a.chain if bridge in in_b), None)
    cap: float | None = None
    if lca is None:
        climbed = a.chain + b.chain
        if a.numa == b.numa:
            cls, cap = LinkClass.NODE, spec.intra_socket_gbps
        elif a.socket == b.socket:
            cls, cap = LinkClass.SYS, spec.intra_socket_gbps
        else:
            cls, cap = LinkClass.SYS, spec.inter_socket_gbps
    else:
        climbed = a.chain[: a.chain.index(lca)] + b.chain[: b.chain.index(lca)]
        if lca == a.chain[-1]:
            cls = LinkClass.PHB
        elif lca == a.chain[0] == b.chain[0]:
            cls = LinkClass.PIX
        else:
            cls = LinkClass.PXB
    hops = [a.link_gbps, b.link_gbps] + [
        tree.uplink_gbps[x] for x in climbed if x in tree.uplink_gbps
    ]
    if cap is not None:
        hops.append(cap)
    return Link(cls), round(min(hops), 3)


# ----- NVLink -----


def _nvlink_counts(spec: HardwareSpec, models: dict[int, GpuModel]) -> dict[tuple[int, int], int]:
    """Bonded NVLinks per GPU pair (a < b); pairs without NVLink are absent."""
    if spec.nvlink.fabric == "mesh":
        return {(min(a, b), max(a, b)): count for a, b, count in spec.nvlink.pairs}
    if spec.nvlink.fabric != "nvswitch":
        return {}
    # On NVSwitch systems nvidia-smi prints every pair as NV<links of the GPU> (NV12 on A100,
    # NV18 on H100/B200; topology.md).
    links = {i: m.nvlink.num_links for i, m in models.items() if m.nvlink is not None}
    return {(a, b): min(links[a], links[b]) for a in links for b in links if a < b}


def _pair(
    a: _Endpoint,
    b: _Endpoint,
    spec: HardwareSpec,
    tree: _Tree,
    nv_counts: dict[tuple[int, int], int],
    models: dict[int, GpuModel],
) -> tuple[Link, float]:
    if a.gpu is not None and b.gpu is not None:
        count = nv_counts.get((min(a.gpu, b.gpu), max(a.gpu, b.gpu)), 0)
        if count:
            rate = min(models[a.gpu].nvlink_gbps_per_link, models[b.gpu].nvlink_gbps_per_link)
            return nvlink(count), round(count * rate, 3)
    return _pcie_path(a, b, spec, tree)


# ----- model objects -----


def _gpu(gpu: GpuSpec, model: GpuModel, end: _Endpoint, cpus: dict[int, tuple[int, ...]]) -> Gpu:
    return Gpu(
        index=GpuIndex(gpu.index),
        model=GpuModelName(model.name),
        numa=NumaId(end.numa),
        numa_affinity=(NumaId(end.numa),),
        cpu_affinity=cpus[end.numa],
        memory_numa=NumaId(gpu.memory_numa) if gpu.memory_numa is not None else None,
        parent=BridgeId(gpu.parent),
        pcie_gbps=end.link_gbps,
    )


def _nic(index: int, nic: NicSpec, end: _Endpoint) -> Nic:
    return Nic(
        index=NicIndex(index),
        name=nic.name,
        numa=NumaId(end.numa),
        parent=BridgeId(nic.parent),
        speed_gbit=nic.speed_gbit,
        pcie_gbps=end.link_gbps,
    )


def _numa_node(node: NumaNodeSpec, cpus: tuple[int, ...]) -> NumaNode:
    return NumaNode(
        id=NumaId(node.id),
        cpus=cpus,
        memory_bytes=round(node.memory_gib * GIB) if node.memory_gib is not None else None,
        kind=NumaKind(node.kind),
        socket=node.socket,
    )


def _bridge(bridge: BridgeSpec, tree: _Tree) -> PcieBridge:
    return PcieBridge(
        id=BridgeId(bridge.id),
        kind=BridgeKind(bridge.kind),
        numa=NumaId(tree.host_numa[bridge.id]),
        parent=BridgeId(bridge.parent) if bridge.parent is not None else None,
        uplink_gbps=tree.uplink_gbps.get(bridge.id),
    )


def _distances(spec: HardwareSpec) -> tuple[tuple[int, ...], ...]:
    if spec.numa_distances is not None:
        return tuple(tuple(row) for row in spec.numa_distances)
    n = len(spec.numa_nodes)
    # Without a measured SLIT, Linux's own defaults: 10 to itself, 21 to any other node.
    return tuple(
        tuple(LOCAL_DISTANCE if i == j else DEFAULT_REMOTE_DISTANCE for j in range(n))
        for i in range(n)
    )
