"""One node's hardware as SVG: NUMA nodes (sockets), PCIe switches, GPUs, NICs, NVLink.

Devices sit in a row grouped by NUMA node and by the PCIe switch above them; NVLink is drawn
as an NVSwitch bar when the node has one, else as arcs between GPU pairs labelled with the
link (``NV12``) and its bandwidth per direction.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from gpuplane.report.html.page import esc
from gpuplane.topology.links import LinkClass
from gpuplane.topology.model import BridgeKind, NodeTopology

W, GAP, TOP = 74, 8, 14


@dataclass(frozen=True, slots=True)
class _Leaf:
    name: str  # GPU3, NIC1
    detail: str
    numa: int | None
    switch: str | None
    gpu: int | None


def _leaves(topo: NodeTopology) -> list[_Leaf]:
    switches = {b.id for b in topo.bridges if b.kind is BridgeKind.SWITCH}
    out = [
        _Leaf(
            f"GPU{g.index}",
            str(g.model),
            g.numa,
            g.parent if g.parent in switches else None,
            g.index,
        )
        for g in topo.gpus
    ]
    out += [
        _Leaf(
            f"NIC{n.index}",
            f"{n.speed_gbit:g} Gb/s" if n.speed_gbit else n.name,
            n.numa,
            n.parent if n.parent in switches else None,
            None,
        )
        for n in topo.nics
    ]
    return sorted(
        out,
        key=lambda leaf: (
            leaf.numa if leaf.numa is not None else 1 << 20,
            leaf.switch or "",
            leaf.gpu is None,
            leaf.name,
        ),
    )


def _group_boxes(leaves: list[_Leaf], key: str, y: int, h: int, fill: str) -> list[str]:
    parts: list[str] = []
    i = 0
    while i < len(leaves):
        value = getattr(leaves[i], key)
        j = i
        while j + 1 < len(leaves) and getattr(leaves[j + 1], key) == value:
            j += 1
        if value is not None or key == "numa":
            x0, x1 = GAP + i * (W + GAP) - 4, GAP + j * (W + GAP) + W + 4
            label = (
                (f"NUMA {value}" if value is not None else "NUMA unknown")
                if key == "numa"
                else f"PCIe switch {value}"
            )
            parts.append(
                f'<rect x="{x0}" y="{y}" width="{x1 - x0}" height="{h}" rx="4" '
                f'fill="{fill}" stroke="#7d8797"/>'
            )
            parts.append(f'<text x="{x0 + 4}" y="{y + 11}" font-size="10">{esc(label)}</text>')
        i = j + 1
    return parts


def _nvlink(topo: NodeTopology, xs: dict[int, float], y: int) -> tuple[list[str], int]:
    parts: list[str] = []
    if topo.nvswitch and topo.num_gpus > 1:
        bw = topo.gpu_bandwidth_gbps(0, 1)
        x0, x1 = min(xs.values()) - W / 2, max(xs.values()) + W / 2
        parts.append(f'<rect x="{x0}" y="{y + 20}" width="{x1 - x0}" height="14" fill="#2e7d32"/>')
        parts.append(
            f'<text x="{x0 + 4}" y="{y + 31}" font-size="10" fill="#fff">NVSwitch: '
            f"{esc(topo.gpu_link(0, 1).label)}, {bw:g} GB/s per direction per GPU</text>"
        )
        parts += [
            f'<line x1="{x}" y1="{y}" x2="{x}" y2="{y + 20}" stroke="#2e7d32" stroke-width="2"/>'
            for x in xs.values()
        ]
        return parts, 40
    pairs = [
        (a, b)
        for a in range(topo.num_gpus)
        for b in range(a + 1, topo.num_gpus)
        if topo.gpu_link(a, b).cls is LinkClass.NV
    ]
    depth = 0
    for a, b in pairs:
        span = abs(xs[b] - xs[a])
        h = 12 + span * 0.18
        depth = max(depth, int(h) + 14)
        mid = (xs[a] + xs[b]) / 2
        label = f"{topo.gpu_link(a, b).label} {topo.gpu_bandwidth_gbps(a, b):g}"
        parts.append(
            f'<path d="M{xs[a]},{y} Q{mid},{y + 2 * h} {xs[b]},{y}" fill="none" '
            'stroke="#2e7d32" stroke-width="1.5"/>'
        )
        parts.append(
            f'<text x="{mid}" y="{y + h + 4}" font-size="8" text-anchor="middle" '
            f'fill="#2e7d32">{esc(label)}</text>'
        )
    return parts, depth


def _fill(leaf: _Leaf, selected: Collection[int], free: Collection[int]) -> tuple[str, str]:
    """(fill, stroke attributes): chosen GPUs stand out, free ones are outlined dashed."""
    if leaf.gpu is None:
        return "#d7ecf7", 'stroke="#55606e"'
    if leaf.gpu in selected:
        return "#f28e2b", 'stroke="#8a3c00" stroke-width="3"'
    if leaf.gpu in free:
        return "#d8efd9", 'stroke="#2e7d32" stroke-width="2" stroke-dasharray="4 2"'
    return ("#e3e6ea" if selected or free else "#d8efd9"), 'stroke="#55606e"'


def topology_svg(
    topo: NodeTopology, selected: Collection[int] = (), free: Collection[int] = ()
) -> str:
    """``selected``: GPU indices drawn highlighted (a pod's set); ``free``: outlined as free.
    With either given, the other GPUs are greyed (held by other pods)."""
    leaves = _leaves(topo)
    width = GAP + len(leaves) * (W + GAP) + 8
    parts = _group_boxes(leaves, "numa", TOP, 120, "#f4f6fa")
    parts += _group_boxes(leaves, "switch", TOP + 18, 96, "#fff8e6")
    xs: dict[int, float] = {}
    for i, leaf in enumerate(leaves):
        x = GAP + i * (W + GAP)
        colour, stroke = _fill(leaf, selected, free)
        parts.append(
            f'<rect x="{x}" y="{TOP + 40}" width="{W}" height="56" rx="3" '
            f'fill="{colour}" {stroke}/>'
        )
        parts.append(
            f'<text x="{x + W / 2}" y="{TOP + 60}" font-size="11" font-weight="bold" '
            f'text-anchor="middle">{esc(leaf.name)}</text>'
        )
        parts.append(
            f'<text x="{x + W / 2}" y="{TOP + 76}" font-size="7" '
            f'text-anchor="middle">{esc(leaf.detail[:16])}</text>'
        )
        if leaf.gpu is not None:
            xs[leaf.gpu] = x + W / 2
    links, depth = _nvlink(topo, xs, TOP + 96) if xs else ([], 0)
    height = TOP + 130 + depth
    body = "".join(parts + links)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" role="img" '
        f'aria-label="{esc(topo.name)} topology">{body}</svg>'
    )
