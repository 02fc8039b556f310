"""Per node pool: the topology drawn, TP groups, GFD labels, NodeResourceTopology, MIG layouts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpuplane.core.errors import InputError
from gpuplane.report.html.mig_svg import mig_svg
from gpuplane.report.html.page import esc, missing, table
from gpuplane.report.html.topology_svg import topology_svg
from gpuplane.report.timeline import MigChange
from gpuplane.slicing.mig.layout import Layout
from gpuplane.slicing.mig.node_devices import layouts_from_config, mig_gpu_of
from gpuplane.topology.gfd import gfd_labels
from gpuplane.topology.model import NodeTopology
from gpuplane.topology.nrt import node_resource_topology
from gpuplane.topology.presets import preset_names
from gpuplane.topology.resolve import resolve_topology
from gpuplane.topology.tp_bandwidth import tp_bandwidth, tp_sizes
from gpuplane.twin.cluster.nodes import make_node
from gpuplane.twin.kubelet.gpu_devices import node_gfd_labels
from gpuplane.twin.scenario.spec import NodePoolSpec
from gpuplane.twin.scheduling.nrt_view import node_nrt


@dataclass(frozen=True, slots=True)
class PoolInfo:
    name: str
    count: int
    topology: NodeTopology | None  # None: not resolvable from the run's files
    mig_layouts: tuple[Layout, ...] | None = None  # initial, per GPU; None: MIG off
    note: str = ""
    # The pool as the scenario gives it (kubelet, sharing, MIG, DRA); None: read from a run's
    # resolved config, where labels and zones follow the hardware alone.
    spec: NodePoolSpec | None = None

    @property
    def num_gpus(self) -> int:
        return self.count * (self.topology.num_gpus if self.topology else 0)


def pools_from_spec(pools: Sequence[NodePoolSpec]) -> tuple[PoolInfo, ...]:
    return tuple(
        PoolInfo(p.name, p.count, p.topology, p.mig.layouts if p.mig is not None else None, spec=p)
        for p in pools
    )


def pools_from_config(pools: Sequence[Mapping[str, Any]]) -> tuple[PoolInfo, ...]:
    """From resolved-config.yaml: presets resolve; a topology file is relative to a scenario
    the run directory does not hold (``gpuplane report --scenario`` gives it)."""
    out = []
    for p in pools:
        name, count, preset = str(p["name"]), int(p["count"]), p.get("preset")
        if preset not in preset_names():
            out.append(PoolInfo(name, count, None, note="hardware from a file; pass --scenario"))
            continue
        topo = resolve_topology(str(preset))
        mig = p.get("mig")
        layouts = None
        if mig:
            try:
                layouts = layouts_from_config(topo, str(mig.get("config", "all-balanced")))
            except InputError as exc:
                out.append(PoolInfo(name, count, topo, note=exc.problem))
                continue
        out.append(PoolInfo(name, count, topo, layouts))
    return tuple(out)


def _tp_table(topo: NodeTopology) -> str:
    rows = []
    for k in tp_sizes(topo.num_gpus):
        tp = tp_bandwidth(topo, k)
        rows.append(
            (
                k,
                str(list(tp.best.order)),
                tp.best.bottleneck_gbps,
                str(list(tp.naive.order)),
                tp.naive.bottleneck_gbps,
                str(list(tp.worst.order)),
                tp.worst.bottleneck_gbps,
            )
        )
    if not rows:
        return missing("tensor-parallel groups (one GPU per node)")
    head = ("TP", "best ring", "GB/s", "GPUs 0..k-1", "GB/s", "worst ring", "GB/s")
    return "<h4>Tensor-parallel groups (ring bottleneck, GB/s per direction)</h4>" + table(
        head, rows
    )


def mig_rows(pool: PoolInfo, changes: Sequence[MigChange]) -> list[tuple[str, str]]:
    """Per GPU of the pool's first node: its initial layout, then each change to it."""
    assert pool.mig_layouts is not None
    node = f"{pool.name}-0"
    rows = [(f"GPU {g} at start", layout.describe()) for g, layout in enumerate(pool.mig_layouts)]
    for change in changes:
        if change.node == node:
            for g, described in sorted(change.layouts.items()):
                rows.append((f"GPU {g} at {change.t_s / 3600:.2f} h", described))
    return rows


def mig_section(pool: PoolInfo, changes: Sequence[MigChange]) -> str:
    if pool.mig_layouts is None or pool.topology is None:
        return ""
    rows = mig_rows(pool, changes)
    others = sorted(
        {c.node for c in changes if c.node.startswith(pool.name + "-")} - {f"{pool.name}-0"}
    )
    more = f"<p>Repartitioned too: {esc(', '.join(others))}.</p>" if others else ""
    return (
        f"<h4>MIG layouts of {esc(pool.name)}-0 (memory slices)</h4>"
        + mig_svg(mig_gpu_of(pool.topology), rows)
        + more
    )


def pool_html(pool: PoolInfo, changes: Sequence[MigChange]) -> str:
    head = f"<h3>{esc(pool.name)}: {pool.count} node(s)</h3>"
    topo = pool.topology
    if topo is None:
        return head + missing(f"the hardware of {pool.name} ({pool.note})")
    if pool.spec is not None:
        node = make_node(pool.spec, 0)
        labels = node_gfd_labels(node)
        nrt = node_nrt(node)
    else:
        labels = gfd_labels(topo, machine=topo.machine)
        nrt = node_resource_topology(topo, node_name=f"{pool.name}-0")
    nrt_rows = [
        (z.name, z.type, ", ".join(f"{r.name}={r.capacity}" for r in z.resources))
        for z in nrt.zones
    ]
    return (
        head + f"<p>{esc(topo.name)}: {topo.num_gpus} GPU ({esc(', '.join(topo.gpu_models))}), "
        f"{len(topo.nics)} NIC, {len(topo.cpu_numa_nodes())} CPU NUMA node(s).</p>"
        + topology_svg(topo)
        + _tp_table(topo)
        + "<details><summary>GPU Feature Discovery labels</summary>"
        + table(("label", "value"), sorted(labels.items()))
        + "</details><details><summary>NodeResourceTopology zones</summary>"
        + table(("zone", "type", "resources"), nrt_rows)
        + "</details>"
        + mig_section(pool, changes)
    )
