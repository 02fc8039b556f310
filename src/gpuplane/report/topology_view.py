"""A readable terminal picture of one node: sockets, PCIe tree, GPUs, NICs and links."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from gpuplane.core.cpuset import format_cpu_list
from gpuplane.core.units import GIB
from gpuplane.topology.links import LinkClass
from gpuplane.topology.model import BridgeKind, NodeTopology, NumaKind

LINK_STYLE: dict[LinkClass, str] = {
    LinkClass.X: "dim",
    LinkClass.NV: "bold green",
    LinkClass.PIX: "cyan",
    LinkClass.PXB: "cyan",
    LinkClass.PHB: "yellow",
    LinkClass.NODE: "yellow",
    LinkClass.SYS: "red",
}


def _gpu_line(topo: NodeTopology, index: int) -> Text:
    gpu = topo.gpus[index]
    text = Text.assemble(("GPU" + str(index), "bold green"), f"  {gpu.model}")
    if gpu.memory_numa is not None:
        text.append(f"  memory NUMA {gpu.memory_numa}", style="magenta")
    nics = topo.nearest_nics(index)
    if nics:
        link = topo.gpu_nic_link(index, nics[0]).label
        names = ", ".join(f"NIC{n}" for n in nics)
        text.append(f"  nearest {names} ({link})", style="dim")
    return text


def _nic_line(topo: NodeTopology, index: int) -> Text:
    nic = topo.nics[index]
    speed = f"  {nic.speed_gbit:g} Gb/s" if nic.speed_gbit else ""
    return Text.assemble(("NIC" + str(index), "bold cyan"), f"  {nic.name}{speed}")


def _bridge_label(topo: NodeTopology, bridge_id: str) -> Text:
    bridge = next(b for b in topo.bridges if b.id == bridge_id)
    kind = "host bridge" if bridge.kind is BridgeKind.HOST_BRIDGE else "PCIe switch"
    up = f"  uplink {bridge.uplink_gbps:g} GB/s" if bridge.uplink_gbps else ""
    return Text.assemble((f"{kind} {bridge.id}", "yellow"), (up, "dim"))


def _add_children(tree: Tree, topo: NodeTopology, parent: str | None, numa: int | None) -> None:
    for bridge in topo.bridges:
        if bridge.parent == parent and (parent is not None or bridge.numa == numa):
            branch = tree.add(_bridge_label(topo, bridge.id))
            _add_children(branch, topo, bridge.id, numa)
    if parent is None:
        return
    for gpu in topo.gpus:
        if gpu.parent == parent:
            tree.add(_gpu_line(topo, gpu.index))
    for nic in topo.nics:
        if nic.parent == parent:
            tree.add(_nic_line(topo, nic.index))


def _numa_label(topo: NodeTopology, numa_id: int) -> Text:
    node = next(n for n in topo.numa_nodes if n.id == numa_id)
    parts = [f"NUMA {node.id}"]
    if node.socket is not None:
        parts.append(f"socket {node.socket}")
    if node.kind is NumaKind.GPU_MEMORY:
        parts.append("GPU memory")
    if node.cpus:
        parts.append(f"cpus {format_cpu_list(node.cpus)} ({len(node.cpus)})")
    if node.memory_bytes:
        parts.append(f"{node.memory_bytes / GIB:,.0f} GiB")
    return Text("  ".join(parts), style="bold")


def hardware_tree(topo: NodeTopology) -> Tree:
    root = Tree(Text.assemble((topo.name, "bold"), f"  {topo.machine or ''}".rstrip()))
    for node in topo.numa_nodes:
        branch = root.add(_numa_label(topo, node.id))
        if topo.bridges:
            _add_children(branch, topo, None, node.id)
        for gpu in topo.gpus:
            if gpu.numa == node.id and (gpu.parent is None or not topo.bridges):
                branch.add(_gpu_line(topo, gpu.index))
        for nic in topo.nics:
            if nic.numa == node.id and (nic.parent is None or not topo.bridges):
                branch.add(_nic_line(topo, nic.index))
    loose = [
        c.index for c in topo.nics if c.numa is None and (c.parent is None or not topo.bridges)
    ]
    if loose:
        branch = root.add(Text("NUMA unknown (SYS to every GPU)", style="bold"))
        for idx in loose:
            branch.add(_nic_line(topo, idx))
    return root


def link_matrix_table(topo: NodeTopology) -> Table:
    names = topo.device_names()
    table = Table(title="Links (as nvidia-smi topo -m)", show_lines=False, pad_edge=False)
    table.add_column("", style="bold")
    for name in names:
        table.add_column(name, justify="center")
    for i, row in enumerate(topo.links):
        cells = [Text(link.label, style=LINK_STYLE[link.cls]) for link in row]
        table.add_row(names[i], *cells)
    return table


def bandwidth_legend(topo: NodeTopology) -> Table:
    """Each distinct GPU-to-GPU link label with its per-direction bandwidth and pair count."""
    seen: dict[tuple[str, float], int] = {}
    for i in range(topo.num_gpus):
        for j in range(i + 1, topo.num_gpus):
            key = (topo.links[i][j].label, topo.bandwidth_gbps[i][j])
            seen[key] = seen.get(key, 0) + 1
    table = Table(title="GPU-to-GPU paths", pad_edge=False)
    table.add_column("link")
    table.add_column("GB/s per direction", justify="right")
    table.add_column("GPU pairs", justify="right")
    for (label, bw), count in sorted(seen.items(), key=lambda kv: -kv[0][1]):
        table.add_row(label, f"{bw:g}", str(count))
    return table


def render_topology(topo: NodeTopology) -> RenderableType:
    islands = topo.nvlink_islands()
    summary = Text(
        f"{topo.num_gpus} GPU ({', '.join(topo.gpu_models)}), {len(topo.nics)} NIC, "
        f"{len(topo.cpu_numa_nodes())} CPU NUMA node(s), "
        + ("NVSwitch fabric" if topo.nvswitch else f"NVLink islands {islands}")
    )
    parts: list[RenderableType] = [summary, hardware_tree(topo), link_matrix_table(topo)]
    if topo.num_gpus > 1:
        parts.append(bandwidth_legend(topo))
    parts.extend(Text(f"note: {note}", style="italic") for note in topo.notes)
    return Group(*parts)
