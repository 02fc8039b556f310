"""``gpuplane demo``: the main job on a scenario (for now: the node pools and their hardware)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import Progress
from rich.table import Table

from gpuplane.cli.console import out
from gpuplane.core.errors import InputError, Location
from gpuplane.k8s.nrt_manifest import nrt_manifest_yaml
from gpuplane.report.demo import build_demo, write_demo
from gpuplane.topology.model import NodeTopology
from gpuplane.topology.nrt import node_resource_topology
from gpuplane.topology.resolve import resolve_topology
from gpuplane.twin.scenario import load_scenario, pool_topology_ref


def _fabric(nvswitch: bool, islands: list[list[int]]) -> str:
    if nvswitch:
        return "NVSwitch"
    if all(len(i) == 1 for i in islands):
        return "none (PCIe)"
    return f"mesh, {len(islands)} island{'s' if len(islands) > 1 else ''}"


def _summary_table(summary: dict[str, Any]) -> Table:
    """One row per pool; per TP size the best / worst ring bottleneck in GB/s per direction."""
    sizes = sorted({r["size"] for p in summary["pools"] for r in p["tensor_parallel"]})
    table = Table(
        title=f"{summary['scenario']}: {summary['nodes']} nodes, {summary['gpus']} GPUs",
        caption="TPk: best / worst ring bottleneck over k GPUs of one node, GB/s per direction",
    )
    table.add_column("pool", no_wrap=True)
    table.add_column("nodes", justify="right")
    table.add_column("GPUs/node", no_wrap=True)
    table.add_column("NVLink", no_wrap=True)
    for k in sizes:
        table.add_column(f"TP{k}", justify="right", no_wrap=True)
    for p in summary["pools"]:
        by_size = {r["size"]: r for r in p["tensor_parallel"]}
        cells = [
            f"{by_size[k]['best_bottleneck_gbps']:.4g} / {by_size[k]['worst_bottleneck_gbps']:.4g}"
            if k in by_size
            else "-"
            for k in sizes
        ]
        model = ", ".join(p["gpu_models"])
        fabric = _fabric(p["nvswitch"], p["nvlink_islands"])
        table.add_row(p["name"], str(p["nodes"]), f"{p['gpus_per_node']}x {model}", fabric, *cells)
    return table


def demo_command(
    scenario_path: Annotated[Path, typer.Argument(metavar="SCENARIO", help="Scenario YAML file.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for the report.")] = Path(
        "out/demo"
    ),
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
    try:
        summary = write_demo(report, out_dir)
        for rep in report.pools:
            nrt = node_resource_topology(rep.topology, node_name=f"{rep.pool.name}-0")
            (out_dir / "pools" / rep.pool.name / "nrt.yaml").write_text(nrt_manifest_yaml(nrt))
    except OSError as exc:
        raise InputError(
            f"cannot write the report: {exc.strerror or exc}",
            expected="a directory gpuplane may create and write",
            location=Location(source=str(out_dir), field="--out"),
        ) from None
    out.print(_summary_table(summary))
    out.print(f"report written to {out_dir}/ (summary.json, report.md, pools/*/)")
