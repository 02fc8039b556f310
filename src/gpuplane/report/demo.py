"""The main job's report: what each node pool of the scenario is, and what it means for TP groups.

Built from pure values (scenario pools and their NodeTopology); writing files is separate from
building the summary, and the output is byte-for-byte reproducible for the same inputs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuplane.core.errors import InputError, Location
from gpuplane.core.units import MIB, TIB
from gpuplane.topology.catalog import get_gpu_model
from gpuplane.topology.collective import ring_allreduce_cost
from gpuplane.topology.gfd import format_gfd_labels
from gpuplane.topology.model import NodeTopology
from gpuplane.topology.nrt import ResourceTopology
from gpuplane.topology.serialize import topology_to_dict
from gpuplane.topology.tp_bandwidth import TpBandwidth, tp_bandwidth, tp_sizes
from gpuplane.twin.cluster.nodes import make_node
from gpuplane.twin.cluster.objects import Node
from gpuplane.twin.kubelet.gpu_devices import node_gfd_labels
from gpuplane.twin.scenario.schema import NodePool, Scenario
from gpuplane.twin.scenario.spec import NodePoolSpec
from gpuplane.twin.scheduling.nrt_view import node_nrt

# Message size for the all-reduce figure: 64 MiB per GPU, a typical fused gradient bucket / a
# large-batch TP activation; the report shows the time for this one size.
ALLREDUCE_BYTES = 64 * MIB


@dataclass(frozen=True, slots=True)
class PoolReport:
    pool: NodePool
    topology: NodeTopology
    tp: tuple[TpBandwidth, ...]
    labels: dict[str, str]
    # The pool's first node as the twin builds it once the GPU stack is up (labels, allocatable,
    # advertised devices), and the NodeResourceTopology its topology-updater publishes.
    node: Node
    nrt: ResourceTopology

    @property
    def num_gpus(self) -> int:
        return self.pool.count * self.topology.num_gpus


@dataclass(frozen=True, slots=True)
class DemoReport:
    scenario: Scenario
    pools: tuple[PoolReport, ...]


def pool_node(pool: NodePoolSpec, index: int, source: str) -> Node:
    """The pool's first node as the twin's pre-provisioned cluster shows it at t = 0: labels
    from the pool, MIG and GFD (sharing and MIG labels included), allocatable and devices as
    the device plugin advertises them. A pool may not set a label key GFD owns."""
    node = make_node(pool, 0)
    gfd = node_gfd_labels(node)
    clash = sorted(set(pool.labels) & set(gfd))
    if clash:
        raise InputError(
            f"label {clash[0]!r} is set by GPU Feature Discovery on every GPU node",
            expected="labels outside the keys GFD manages",
            location=Location(source=source, field=f"node_pools[{index}].labels.{clash[0]}"),
        )
    node.labels.update(gfd)
    node.labels = dict(sorted(node.labels.items()))
    return node


def build_demo(scenario: Scenario, pools: dict[str, NodePoolSpec], source: str) -> DemoReport:
    out = []
    for index, pool in enumerate(scenario.node_pools):
        spec = pools[pool.name]
        topo = spec.topology
        tp = tuple(tp_bandwidth(topo, k) for k in tp_sizes(topo.num_gpus))
        node = pool_node(spec, index, source)
        out.append(PoolReport(pool, topo, tp, node.labels, node, node_nrt(node)))
    return DemoReport(scenario, tuple(out))


def _tp_row(tp: TpBandwidth) -> dict[str, Any]:
    best = ring_allreduce_cost(tp.best, ALLREDUCE_BYTES)
    worst = ring_allreduce_cost(tp.worst, ALLREDUCE_BYTES)
    return {
        "size": tp.size,
        "best_gpus": list(tp.best.order),
        "best_bottleneck_gbps": tp.best.bottleneck_gbps,
        "naive_gpus": list(tp.naive.order),
        "naive_bottleneck_gbps": tp.naive.bottleneck_gbps,
        "worst_gpus": list(tp.worst.order),
        "worst_bottleneck_gbps": tp.worst.bottleneck_gbps,
        "spread": round(tp.spread, 3),
        "allreduce_64mib_best_ms": round(best.time_s * 1e3, 4),
        "allreduce_64mib_worst_ms": round(worst.time_s * 1e3, 4),
        "sets_compared": tp.num_sets,
        "exhaustive": tp.exhaustive,
    }


def pool_summary(rep: PoolReport) -> dict[str, Any]:
    topo = rep.topology
    mem_bytes = sum(get_gpu_model(g.model).memory_mib * MIB for g in topo.gpus)
    return {
        "name": rep.pool.name,
        "source": topo.source,
        "nodes": rep.pool.count,
        "gpus_per_node": topo.num_gpus,
        "gpus": rep.num_gpus,
        "gpu_models": list(topo.gpu_models),
        "gpu_memory_tib": round(rep.pool.count * mem_bytes / TIB, 3),
        "nics_per_node": len(topo.nics),
        "cpu_numa_nodes": len(topo.cpu_numa_nodes()),
        "nvswitch": topo.nvswitch,
        "nvlink_islands": topo.nvlink_islands(),
        "taints": [t.model_dump() for t in rep.pool.taints],
        "tensor_parallel": [_tp_row(tp) for tp in rep.tp],
        "notes": list(topo.notes),
    }


def summary_dict(report: DemoReport) -> dict[str, Any]:
    pools = [pool_summary(p) for p in report.pools]
    return {
        "scenario": report.scenario.name,
        "nodes": sum(p.pool.count for p in report.pools),
        "gpus": sum(p.num_gpus for p in report.pools),
        "gpu_memory_tib": round(sum(p["gpu_memory_tib"] for p in pools), 3),
        "pools": pools,
    }


def _markdown(report: DemoReport, summary: dict[str, Any]) -> str:
    lines = [
        f"# gpuplane report: {report.scenario.name}",
        "",
        report.scenario.description.strip(),
        "",
        f"{summary['nodes']} nodes, {summary['gpus']} GPUs, "
        f"{summary['gpu_memory_tib']} TiB GPU memory.",
        "",
        "## Node pools",
        "",
        "| pool | nodes | GPU/node | model | NVLink | NICs | CPU NUMA |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in summary["pools"]:
        fabric = "NVSwitch" if p["nvswitch"] else f"islands {p['nvlink_islands']}"
        lines.append(
            f"| {p['name']} | {p['nodes']} | {p['gpus_per_node']} | {', '.join(p['gpu_models'])} "
            f"| {fabric} | {p['nics_per_node']} | {p['cpu_numa_nodes']} |"
        )
    lines += [
        "",
        "## Tensor-parallel groups inside one node",
        "",
        "Bottleneck = slowest hop of the best ring over the GPU set, GB/s per direction; "
        "all-reduce of 64 MiB per GPU.",
        "",
        "| pool | TP | best ring | best GB/s | GPUs 0..k-1 GB/s | worst ring | worst GB/s "
        "| 64 MiB all-reduce best / worst (ms) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for p in summary["pools"]:
        for row in p["tensor_parallel"]:
            lines.append(
                f"| {p['name']} | {row['size']} | {row['best_gpus']} "
                f"| {row['best_bottleneck_gbps']:g} "
                f"| {row['naive_bottleneck_gbps']:g} | {row['worst_gpus']} "
                f"| {row['worst_bottleneck_gbps']:g} | {row['allreduce_64mib_best_ms']:.3f} / "
                f"{row['allreduce_64mib_worst_ms']:.3f} |"
            )
    notes = [(p["name"], n) for p in summary["pools"] for n in p["notes"]]
    if notes:
        lines += ["", "## Notes", ""] + [f"- {name}: {note}" for name, note in notes]
    return "\n".join(lines) + "\n"


def write_demo(report: DemoReport, out_dir: Path) -> dict[str, Any]:
    """Write summary.json, report.md and per-pool topology JSON and labels; return the summary."""
    summary = summary_dict(report)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    (out_dir / "report.md").write_text(_markdown(report, summary))
    for rep in report.pools:
        pool_dir = out_dir / "pools" / rep.pool.name
        pool_dir.mkdir(parents=True, exist_ok=True)
        topo_json = json.dumps(topology_to_dict(rep.topology), indent=2, sort_keys=True)
        (pool_dir / "topology.json").write_text(topo_json + "\n")
        (pool_dir / "labels.txt").write_text(format_gfd_labels(rep.labels))
    return summary
