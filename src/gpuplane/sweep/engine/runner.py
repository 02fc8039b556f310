"""Run a sweep: skip the points already in the table, run the rest on an executor, keep each
one as it finishes, and return the whole table in point order."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gpuplane.core.errors import InputError, Location
from gpuplane.sweep.engine.executor import Executor
from gpuplane.sweep.engine.load import Sweep
from gpuplane.sweep.engine.outcome import Outcome
from gpuplane.sweep.engine.table import ResultsStore, Row, row_of

# (points done, points in the sweep, the point that just finished)
OnRow = Callable[[int, int, Row], None]


class PointFailed(RuntimeError):
    """A point raised something other than an InputError: a bug; carries the worker's
    traceback. The rows finished before it are kept."""


@dataclass(frozen=True, slots=True)
class SweepResult:
    sweep: Sweep
    rows: tuple[Row, ...]  # every point, in point order
    path: Path  # the results table
    num_skipped: int  # finished by an earlier run, kept
    num_run: int
    wall_s: float  # of this run's points only

    def records(self) -> list[dict[str, object]]:
        """Each row as {column: value}, values read back from the table's text."""
        return [dict(r.values(self.sweep.columns)) for r in self.rows]


def _failure(outcome: Outcome) -> Exception:
    where = f"point {outcome.point.index} ({outcome.point.label()})"
    if outcome.input_error:
        return InputError(f"{where}: {outcome.error}", location=Location())
    return PointFailed(f"{where} failed in its worker:\n{outcome.error}")


def run_sweep(
    sweep: Sweep,
    executor: Executor,
    out: Path,
    *,
    restart: bool = False,
    on_row: OnRow | None = None,
) -> SweepResult:
    """Run every point not yet in ``out/results.csv``; the first failing point stops the sweep
    (its error raised, every point finished so far kept for a restart)."""
    store = ResultsStore(sweep, out, restart=restart)
    todo = [p for p in sweep.points if p.index not in store.rows]
    skipped = len(sweep.points) - len(todo)
    store.open()
    started = time.perf_counter()
    outcomes = executor.run(sweep.base, sweep.figures, todo)
    try:
        for outcome in outcomes:
            if outcome.figures is None:
                raise _failure(outcome)
            row = row_of(sweep, outcome.point, outcome.figures)
            store.add(row)
            if on_row is not None:
                on_row(len(store.rows), len(sweep.points), row)
    finally:
        close = getattr(outcomes, "close", None)
        if close is not None:
            close()
        store.close()
    wall_s = time.perf_counter() - started
    path = store.finish()
    rows = tuple(sorted(store.rows.values(), key=lambda r: r.index))
    return SweepResult(sweep, rows, path, skipped, len(todo), wall_s)
