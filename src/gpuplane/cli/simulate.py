"""``gpuplane simulate``: run the twin on a scenario and write its files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import TextColumn

from gpuplane.cli.console import err, out
from gpuplane.cli.progress import INTERRUPTED_EXIT, Interruptible, progress_bar
from gpuplane.cli.report import REPORT_FILE, write_html_report, write_trace
from gpuplane.cli.validate import check_scenario, print_warnings, report_valid
from gpuplane.core.duration import parse_duration_s
from gpuplane.core.errors import InputError, Location
from gpuplane.k8s.scenario.loader import LoadedScenario, load_scenario_spec
from gpuplane.report.html.pool_view import pools_from_spec
from gpuplane.report.html.run_data import read_run
from gpuplane.report.run_files import WARNINGS_FILE, write_run
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
    """The twin run, with a progress bar on a terminal; the first Ctrl-C ends it at the next
    1 % step with the result so far (``RunResult.interrupted``)."""
    sim = simulation_from_spec(loaded.spec, seed=seed, check_invariants=check_invariants)
    with (
        Interruptible("the simulation") as stop,
        progress_bar(TextColumn("{task.fields[t]}")) as progress,
    ):
        task = progress.add_task("simulating", total=until_s, t="")
        return sim.run(
            until_s,
            progress=lambda t: progress.update(task, completed=t, t=f"t={t / 3600:.1f} h"),
            should_stop=stop,
        )


def interrupted_note(result: RunResult, requested_s: float, out_dir: Path) -> None:
    """Say that the run was cut short and where its partial files are; exit 130."""
    err.print(
        f"interrupted at simulated t = {result.until_s / 3600:.2f} h of "
        f'{requested_s / 3600:.2f} h: partial results (summary.json "interrupted": true) '
        f"written to {out_dir}/",
        markup=False,
    )
    raise typer.Exit(INTERRUPTED_EXIT)


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


def print_warning_count(loaded: LoadedScenario, out_dir: Path) -> None:
    """After the summary: how many warnings, and where they are kept (nothing if none)."""
    if loaded.warnings:
        count = len(loaded.warnings)
        out.print(
            f"{count} warning{'' if count == 1 else 's'} (printed above; also in "
            f"{out_dir}/{WARNINGS_FILE} and summary.json)",
            markup=False,
            highlight=False,
        )


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
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Check everything as `gpuplane validate` does; do not simulate."
        ),
    ] = False,
) -> None:
    """Run the digital twin on SCENARIO; write summary.json, events.jsonl, timeseries.csv,
    resolved-config.yaml and report.html to --out and print a summary."""
    until_s = parse_until(until)
    if dry_run:
        loaded = check_scenario(scenario_path)
        print_warnings(loaded)
        report_valid(scenario_path, loaded)
        return
    loaded = load_scenario_spec(scenario_path)
    print_warnings(loaded)
    result = run_twin(loaded, seed=seed, until_s=until_s, check_invariants=check_invariants)
    write_outputs(loaded, result, out_dir, trace_path=trace)
    out.print(run_summary_view(result.summary))
    print_warning_count(loaded, out_dir)
    if result.interrupted:
        interrupted_note(result, until_s, out_dir)
    out.print(
        f"results written to {out_dir}/ (summary.json, events.jsonl, timeseries.csv, "
        "resolved-config.yaml, report.html)" + (f"; trace in {trace}" if trace else "")
    )
