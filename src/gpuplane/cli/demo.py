"""``gpuplane demo``: the main job on a scenario (for now: the node pools and their hardware)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from gpuplane.cli.bench import DEFAULT_NODES, DEFAULT_PODS, result_json
from gpuplane.cli.console import err, out
from gpuplane.cli.progress import INTERRUPTED_EXIT, progress_bar
from gpuplane.cli.report import OPENB_CURVES, REPORT_FILE, write_html_report
from gpuplane.cli.simulate import (
    interrupted_note,
    parse_until,
    print_warning_count,
    run_twin,
    write_outputs,
)
from gpuplane.cli.validate import check_scenario, print_warnings, report_valid
from gpuplane.core.errors import InputError, Location
from gpuplane.k8s.manifests.node import node_manifest
from gpuplane.k8s.manifests.nrt import nrt_manifest_yaml
from gpuplane.k8s.output import dump_yaml
from gpuplane.k8s.scenario.loader import load_scenario_spec
from gpuplane.report.demo import build_demo, write_demo
from gpuplane.report.html.pool_view import pools_from_spec
from gpuplane.report.run_view import run_summary_view
from gpuplane.scheduler.openb.data_dir import default_data_dir
from gpuplane.scheduler.openb.experiment import run_protocol
from gpuplane.scheduler.openb.trace import load_nodes, load_pods
from gpuplane.scheduler.openb.workload import TUNE_RATIO


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


DEMO_POLICIES = ("bestfit", "fgd", "gpuplane")


def _openb_comparison(out_dir: Path) -> dict[str, list[float | None]] | None:
    """One seed of the FGD paper's OpenB experiment: how much of a 6,212-GPU cluster each
    placement policy leaves unallocated (docs/openb.md). Skipped without the shared data."""
    data_dir = default_data_dir()
    if data_dir is None:
        out.print("OpenB comparison skipped: shared/data/openb not found beside the repository")
        return None
    nodes = load_nodes(data_dir / DEFAULT_NODES)
    pods = load_pods(data_dir / DEFAULT_PODS)
    rows = {}
    with progress_bar() as progress:
        task = progress.add_task("OpenB placement comparison", total=len(DEMO_POLICIES))
        for policy in DEMO_POLICIES:
            result = run_protocol(nodes, pods, policy, (42,))
            rows[policy] = result_json(
                result, data_dir / DEFAULT_NODES, data_dir / DEFAULT_PODS, TUNE_RATIO, True
            )
            progress.advance(task)
    table = Table(
        title="OpenB (FGD paper protocol, default trace, seed 42): unallocated GPUs "
        "at arrived = 100 %"
    )
    table.add_column("policy")
    table.add_column("unallocated %", justify="right")
    for policy, data in rows.items():
        table.add_row(policy, f"{data['unallocated_pct_at_100']:.2f}")
    out.print(table)
    summary = {p: d["unallocated_pct_at_100"] for p, d in rows.items()}
    (out_dir / "openb.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    curves = {p: d["per_seed"][0]["unallocated_curve"] for p, d in rows.items()}
    (out_dir / OPENB_CURVES).write_text(json.dumps(curves, sort_keys=True) + "\n")
    return curves


def demo_command(
    scenario_path: Annotated[Path, typer.Argument(metavar="SCENARIO", help="Scenario YAML file.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for the report.")] = Path(
        "out/demo"
    ),
    seed: Annotated[int, typer.Option(min=0, help="Seed of the twin run.")] = 0,
    until: Annotated[str, typer.Option(help="Simulated time of the twin run.")] = "8h",
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Check everything as `gpuplane validate` does; do not run."),
    ] = False,
) -> None:
    """The main job on SCENARIO: the hardware of every node pool (TP bandwidth, GFD labels,
    NodeResourceTopology), a twin run of the whole cluster, and one seed of the FGD paper's
    OpenB placement experiment; prints the summaries and writes the report to --out (the
    twin's files under --out/twin)."""
    until_s = parse_until(until)
    if dry_run:
        checked = check_scenario(scenario_path)
        print_warnings(checked)
        report_valid(scenario_path, checked)
        return
    with progress_bar() as progress:
        task = progress.add_task("reading the scenario and its hardware", total=None)
        loaded = load_scenario_spec(scenario_path)
        progress.update(task, completed=1, total=1)
    print_warnings(loaded)
    pools = {p.name: p for p in loaded.spec.node_pools}
    report = build_demo(loaded.scenario, pools, str(scenario_path))
    try:
        summary = write_demo(report, out_dir)
        for rep in report.pools:
            pool_dir = out_dir / "pools" / rep.pool.name
            (pool_dir / "nrt.yaml").write_text(nrt_manifest_yaml(rep.nrt))
            (pool_dir / "node.yaml").write_text(dump_yaml(node_manifest(rep.node)))
    except OSError as exc:
        raise InputError(
            f"cannot write the report: {exc.strerror or exc}",
            expected="a directory gpuplane may create and write",
            location=Location(source=str(out_dir), field="--out"),
        ) from None
    out.print(_summary_table(summary))
    result = run_twin(loaded, seed=seed, until_s=until_s)
    write_outputs(loaded, result, out_dir / "twin", report=False)
    out.print(run_summary_view(result.summary))
    print_warning_count(loaded, out_dir / "twin")
    if result.interrupted:
        interrupted_note(result, until_s, out_dir / "twin")
    try:
        curves = _openb_comparison(out_dir)
    except KeyboardInterrupt:
        err.print(
            f"interrupted during the OpenB comparison: the pools and the twin run are written "
            f"to {out_dir}/; openb.json and report.html are not",
            markup=False,
        )
        raise typer.Exit(INTERRUPTED_EXIT) from None
    write_html_report(
        out_dir / "twin",
        out_dir / REPORT_FILE,
        pools_from_spec(loaded.spec.node_pools),
        curves or {},
    )
    out.print(
        f"report written to {out_dir}/ (report.html, summary.json, report.md, pools/*/; the "
        f"twin run in "
        f"{out_dir}/twin/: summary.json, events.jsonl, timeseries.csv, resolved-config.yaml)"
    )
