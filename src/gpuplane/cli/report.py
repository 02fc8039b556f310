"""``gpuplane report RUN_DIR``: the self-contained HTML report of a twin run's files."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from gpuplane.cli.console import out
from gpuplane.cli.html_out import write_text_file
from gpuplane.core.textio import read_user_text
from gpuplane.k8s.scenario.loader import load_scenario_spec
from gpuplane.report.chrome_trace import chrome_trace
from gpuplane.report.html.pool_view import PoolInfo, pools_from_config, pools_from_spec
from gpuplane.report.html.run_data import RunData, read_run
from gpuplane.report.html.run_report import build_run_report
from gpuplane.report.timeline import build_timeline

REPORT_FILE = "report.html"
OPENB_CURVES = "openb-curves.json"


def write_html_report(
    run_dir: Path,
    out_path: Path,
    pools: Sequence[PoolInfo] | None = None,
    openb: Mapping[str, Sequence[float | None]] | None = None,
) -> Path:
    """Read the run's files back and write the report (one code path for every command)."""
    run = read_run(run_dir)
    html = build_run_report(
        run, pools if pools is not None else pools_from_config(run.pools), openb=openb
    )
    write_text_file(out_path, html, "--out")
    return out_path


def write_trace(run: RunData, path: Path) -> None:
    trace = chrome_trace(
        build_timeline(run.events, run.until_s),
        scenario=str(run.summary.get("scenario", "")),
        seed=int(run.summary.get("seed", 0)),
    )
    write_text_file(
        path, json.dumps(trace, sort_keys=True, separators=(",", ":")) + "\n", "--trace"
    )


def _openb(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    data: dict[str, Any] = json.loads(read_user_text(path))
    return data


def report_command(
    run_dir: Annotated[Path, typer.Argument(metavar="RUN_DIR", help="What simulate --out wrote.")],
    out_path: Annotated[
        Path | None, typer.Option("--out", help="The HTML file (default RUN_DIR/report.html).")
    ] = None,
    scenario: Annotated[
        Path | None,
        typer.Option(help="The run's scenario file, for pools whose hardware is a file."),
    ] = None,
    trace: Annotated[
        Path | None, typer.Option(help="Also write the run as a Chrome trace (JSON).")
    ] = None,
) -> None:
    """Write one self-contained HTML file (no network, no script) from a run's summary.json,
    events.jsonl, timeseries.csv and resolved-config.yaml. A `gpuplane demo` directory works
    too (its twin/ run, its pools and the OpenB curves)."""
    base = run_dir
    if (run_dir / "twin" / "summary.json").exists():
        run_dir = run_dir / "twin"
    pools = pools_from_spec(load_scenario_spec(scenario).spec.node_pools) if scenario else None
    target = out_path or base / REPORT_FILE
    write_html_report(run_dir, target, pools, _openb(base / OPENB_CURVES))
    if trace is not None:
        write_trace(read_run(run_dir), trace)
    out.print(f"report written to {target}" + (f", trace to {trace}" if trace else ""))
