"""``gpuplane demo``: the main job on a scenario (for now: the node pools and their hardware)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import Progress
from rich.table import Table

from gpuplane.cli.console import out
from gpuplane.k8s.nrt_manifest import nrt_manifest_yaml
from gpuplane.report.demo import build_demo, write_demo
from gpuplane.topology.model import NodeTopology
from gpuplane.topology.nrt import node_resource_topology
from gpuplane.topology.resolve import resolve_topology
from gpuplane.twin.scenario import load_scenario, pool_topology_ref


def _summary_table(summary: dict[str, Any]) -> Table:
    table = Table(title=f"{summary['scenario']}: {summary['nodes']} nodes, {summary['gpus']} GPUs")
    for col in ("pool", "nodes", "GPU", "fabric", "TP", "best GB/s", "0..k-1 GB/s", "worst GB/s"):
        table.add_column(col)
    for p in summary["pools"]:
        fabric = "NVSwitch" if p["nvswitch"] else f"{len(p['nvlink_islands'])} island(s)"
        for i, row in enumerate(p["tensor_parallel"]):
            head = [p["name"], str(p["nodes"]), f"{p['gpus_per_node']}x {', '.join(p['gpu_models'])}",
                    fabric] if i == 0 else ["", "", "", ""]
            table.add_row(*head, str(row["size"]), f"{row['best_bottleneck_gbps']:g}",
                          f"{row['naive_bottleneck_gbps']:g}", f"{row['worst_bottleneck_gbps']:g}")
    return table


def demo_command(
    scenario_path: Annotated[Path, typer.Argument(metavar="SCENARIO", help="Scenario YAML file.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for the report.")] = Path("out/demo"),
) -> None:
    """Run the main job on SCENARIO: print a summary and write a report to --out."""
    scenario = load_scenario(scenario_path)
    topologies: dict[str, NodeTopology] = {}
    with Progress(transient=True, console=out) as progress:
        task = progress.add_task("analysing node pools", total=len(scenario.node_pools))
        for pool in scenario.node_pools:
            ref = pool_topology_ref(pool, scenario_path)
            topologies[pool.name] = resolve_topology(ref, gpu_model=pool.gpu_model)
            progress.advance(task)
    report = build_demo(scenario, topologies, str(scenario_path))
    summary = write_demo(report, out_dir)
    for rep in report.pools:
        nrt = node_resource_topology(rep.topology, node_name=f"{rep.pool.name}-0")
        (out_dir / "pools" / rep.pool.name / "nrt.yaml").write_text(nrt_manifest_yaml(nrt))
    out.print(_summary_table(summary))
    out.print(f"report written to {out_dir}/ (summary.json, report.md, pools/*/)")
