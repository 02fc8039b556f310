"""``gpuplane simulate``: run the twin on a scenario and write its files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

from gpuplane.cli.console import err, out
from gpuplane.cli.report import REPORT_FILE, write_html_report, write_trace
from gpuplane.core.duration import parse_duration_s
from gpuplane.core.errors import InputError, Location
from gpuplane.k8s.scenario_loader import LoadedScenario, load_scenario_spec
from gpuplane.report.html.pool_view import pools_from_spec
from gpuplane.report.html.run_data import read_run
from gpuplane.report.run_files import write_run
from gpuplane.report.run_view import run_summary_view
from gpuplane.twin.build import simulation_from_spec
from gpuplane.twin.simulation import RunResult

# A year of simulated time: far beyond any trace or scenario, far below what the metrics
# arrays (one row per interval) can hold.
MAX_UNTIL_S = 366 * 86400.0


def parse_until(text: str) -> float:
    try:
        until_s = parse_duration_s(text)
    except InputError as exc:
        raise InputError(
            exc.problem, expected=exc.expected, location=Location(field="--until")
        ) from None
    if until_s <= 0:
        raise InputError(
            f"{text!r} is not a positive duration",
            expected="e.g. 8h",
            location=Location(field="--until"),
        )
    if until_s > MAX_UNTIL_S:
        raise InputError(
            f"{text!r} is longer than {MAX_UNTIL_S / 86400:.0f} days",
            expected="a simulated time of at most a year (e.g. 8h, 30d)",
            location=Location(field="--until"),
        )
    return until_s


def run_twin(
    loaded: LoadedScenario, *, seed: int, until_s: float, check_invariants: bool = False
) -> RunResult:
    sim = simulation_from_spec(loaded.spec, seed=seed, check_invariants=check_invariants)
    with Progress(
        TextColumn("simulating"),
        BarColumn(),
        TextColumn("{task.fields[t]}"),
        TimeRemainingColumn(),
        console=err,
        transient=True,
    ) as progress:
        task = progress.add_task("twin", total=until_s, t="")
        return sim.run(
            until_s,
            progress=lambda t: progress.update(task, completed=t, t=f"t={t / 3600:.1f} h"),
        )


def write_outputs(
    loaded: LoadedScenario,
    result: RunResult,
    out_dir: Path,
    *,
    report: bool = True,
    trace_path: Path | None = None,
) -> None:
    """The run's files; then report.html beside them and the Chrome trace, both read back
    from the files just written."""
    try:
        write_run(out_dir, result, loaded.scenario.model_dump(mode="json"), loaded.warnings)
    except OSError as exc:
        raise InputError(
            f"cannot write the results: {exc.strerror or exc}",
            expected="a directory gpuplane may create and write",
            location=Location(source=str(out_dir), field="--out"),
        ) from None
    if report:
        write_html_report(out_dir, out_dir / REPORT_FILE, pools_from_spec(loaded.spec.node_pools))
    if trace_path is not None:
        write_trace(read_run(out_dir), trace_path)


def simulate_command(
    scenario_path: Annotated[Path, typer.Argument(metavar="SCENARIO", help="Scenario YAML file.")],
    seed: Annotated[int, typer.Option(min=0, help="Seed of every random choice.")] = 0,
    until: Annotated[str, typer.Option(help="Simulated time to run, e.g. 8h, 2d.")] = "24h",
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for the results.")] = Path(
        "out/simulate"
    ),
    check_invariants: Annotated[
        bool, typer.Option(help="Check conservation after every event (slow; for debugging).")
    ] = False,
    trace: Annotated[
        Path | None,
        typer.Option(help="Also write the run as a Chrome trace (chrome://tracing, Perfetto)."),
    ] = None,
) -> None:
    """Run the digital twin on SCENARIO; write summary.json, events.jsonl, timeseries.csv,
    resolved-config.yaml and report.html to --out and print a summary."""
    until_s = parse_until(until)
    loaded = load_scenario_spec(scenario_path)
    for warning in loaded.warnings:
        err.print(f"[yellow]warning:[/] {warning}", markup=True, highlight=False)
    result = run_twin(loaded, seed=seed, until_s=until_s, check_invariants=check_invariants)
    write_outputs(loaded, result, out_dir, trace_path=trace)
    out.print(run_summary_view(result.summary))
    out.print(
        f"results written to {out_dir}/ (summary.json, events.jsonl, timeseries.csv, "
        "resolved-config.yaml, report.html)" + (f"; trace in {trace}" if trace else "")
    )
