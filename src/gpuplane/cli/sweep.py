"""``gpuplane sweep SWEEP.yaml``: run every point of a sweep, keep the table, print the best."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from gpuplane.cli.console import err, out
from gpuplane.core.errors import InputError, Location
from gpuplane.report.sweep_plots import write_plots
from gpuplane.sweep import (
    Executor,
    LocalPool,
    PointFailed,
    RayPool,
    Row,
    SweepResult,
    best,
    load_sweep,
    pareto_front,
    run_sweep,
)
from gpuplane.sweep.bases.registry import bases
from gpuplane.sweep.engine.executor import InProcess
from gpuplane.sweep.engine.runner import OnRow


def _executor(workers: int | None, ray: str | None) -> Executor:
    if workers is not None and workers < 1:
        raise InputError(
            f"--workers {workers}", expected="1 or more", location=Location(field="--workers")
        )
    if ray is not None:
        if not ray.strip():
            raise InputError(
                "empty --ray",
                expected="local, auto or a Ray address",
                location=Location(field="--ray"),
            )
        return RayPool(ray, workers)
    return InProcess() if workers == 1 else LocalPool(workers)


def _progress(started: float) -> OnRow:
    last = [0.0]

    def on_row(done: int, total: int, row: Row) -> None:
        now = time.perf_counter()
        if now - last[0] >= 2.0 or done == total:
            last[0] = now
            err.print(f"{done}/{total} points, {now - started:.0f} s", highlight=False)

    return on_row


def _records_table(
    title: str, columns: tuple[str, ...], records: Sequence[Mapping[str, object]]
) -> Table:
    # Figure paths such as serving[qwen-chat].slo_attainment are not rich markup.
    table = Table(title=escape(title))
    for column in columns:
        table.add_column(escape(column), justify="right")
    for r in records:
        table.add_row(*("" if r[c] is None else escape(str(r[c])) for c in columns))
    return table


def print_summary(result: SweepResult) -> None:
    sweep, file = result.sweep, result.sweep.file
    records = result.records()
    out.print(
        f"sweep {file.name}: {len(result.rows)} points ({result.num_run} run now, "
        f"{result.num_skipped} kept from an earlier run) in {result.wall_s:.1f} s; "
        f"table: {result.path}",
        highlight=False,
    )
    if file.objectives:
        chosen = best(records, file.objectives, file.constraints, file.best)
        goal = ", ".join(f"{d} {f}" for f, d in file.objectives.items())
        limits = ", ".join(
            f"{f} in [{'' if b.min is None else b.min}, {'' if b.max is None else b.max}]"
            for f, b in file.constraints.items()
        )
        title = f"best points ({goal}" + (f"; {limits}" if limits else "") + ")"
        if chosen:
            out.print(_records_table(title, sweep.columns, chosen))
        else:
            out.print(f"{title}: no point meets the constraints", highlight=False)
    for x, y in file.pareto:
        front = pareto_front(records, x, y, file.objectives)
        out.print(_records_table(f"Pareto front: {x} vs {y}", sweep.columns, front))


def sweep_command(
    sweep_path: Annotated[Path, typer.Argument(metavar="SWEEP", help="Sweep YAML file.")],
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", help="Results folder (default: out/sweep/NAME)."),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(help="Worker processes (default: every CPU this process may use)."),
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="local|auto|ADDRESS",
            help="Run the points as Ray tasks: local (start Ray here with --workers CPUs), auto "
            "(the cluster `ray start` made), or a cluster address.",
        ),
    ] = None,
    restart: Annotated[
        bool, typer.Option(help="Discard the points an earlier run finished; run them all.")
    ] = False,
    plots: Annotated[bool, typer.Option(help="Write SVG plots beside the table.")] = True,
    list_points: Annotated[
        bool, typer.Option("--list", help="Print the points and exit without running them.")
    ] = False,
) -> None:
    """Run SWEEP's points (local process pool, or Ray with --ray), keep each finished point in
    OUT/results.csv (a rerun skips them), print the best points and Pareto fronts, and write
    plots of each figure against each parameter to OUT/plots/."""
    sweep = load_sweep(sweep_path, bases())
    if list_points:
        for point in sweep.points:
            out.print(f"{point.index}: {point.label()}", highlight=False)
        return
    executor = _executor(workers, ray)
    folder = out_dir if out_dir is not None else Path("out/sweep") / sweep.file.name
    err.print(
        f"{len(sweep.points)} points on {executor.description}; results in {folder}/",
        highlight=False,
    )
    try:
        result = run_sweep(
            sweep, executor, folder, restart=restart, on_row=_progress(time.perf_counter())
        )
    except PointFailed as exc:
        err.print(f"[bold red]error:[/] {exc}", markup=False, highlight=False)
        raise typer.Exit(1) from None
    print_summary(result)
    if plots:
        written = write_plots(result, folder / "plots")
        out.print(f"{len(written)} plots in {folder / 'plots'}/", highlight=False)
