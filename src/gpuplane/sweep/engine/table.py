"""The results table: one CSV row per point, every parameter and figure; kept across restarts.

Rows are appended as points finish (a killed sweep keeps every finished point; a line cut short
by the kill is dropped on restart) and, once every point is in, the file is rewritten in point
order, so the finished table is the same bytes whatever ran the points and in whatever order.
Beside it, ``sweep.json`` records the sweep's digest: a restart keeps the rows only when the
sweep file and the base's input are the ones that made them.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from gpuplane.core.errors import InputError, Location
from gpuplane.sweep.engine.load import Sweep
from gpuplane.sweep.engine.point import Cell, Point, format_cell, parse_cell

RESULTS_FILE = "results.csv"
META_FILE = "sweep.json"


@dataclass(frozen=True, slots=True)
class Row:
    """A finished point: its figures as the table's text."""

    index: int
    cells: tuple[str, ...]  # every column, "point" first

    def values(self, columns: tuple[str, ...]) -> dict[str, Cell]:
        return {c: parse_cell(t) for c, t in zip(columns, self.cells, strict=True)}


def row_of(sweep: Sweep, point: Point, figures: Mapping[str, Cell]) -> Row:
    cells = [str(point.index)]
    cells += [format_cell(v) for _, v in point.params]
    cells += [format_cell(figures.get(f)) for f in sweep.figures]
    return Row(point.index, tuple(cells))


def _line(cells: tuple[str, ...]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(cells)
    return buf.getvalue()


def _stale(out: Path, why: str) -> InputError:
    return InputError(
        f"the results there were made by another sweep ({why})",
        expected="the same sweep file and base input to resume, or --restart to discard them, "
        "or another --out",
        location=Location(source=str(out / RESULTS_FILE)),
    )


def _parse_rows(sweep: Sweep, text: str, out: Path) -> dict[int, Row]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines.pop()  # cut short by a kill
    if not lines:
        return {}
    reader = csv.reader(lines)
    header = tuple(next(reader))
    if header != sweep.columns:
        raise _stale(out, "other columns")
    expected = {p.index: p for p in sweep.points}
    rows: dict[int, Row] = {}
    for cells in reader:
        if len(cells) != len(header) or not cells[0].isdigit():
            raise _stale(out, f"row {cells[:1]} is not one of this sweep's rows")
        row = Row(int(cells[0]), tuple(cells))
        point = expected.get(row.index)
        mine = [format_cell(v) for _, v in point.params] if point else None
        if mine != list(row.cells[1 : 1 + len(sweep.parameter_names)]):
            raise _stale(out, f"point {row.index} has other parameter values")
        rows[row.index] = row
    return rows


class ResultsStore:
    """``results.csv`` and ``sweep.json`` in ``out``: what is done, and appending what finishes."""

    def __init__(self, sweep: Sweep, out: Path, *, restart: bool = False) -> None:
        self.sweep = sweep
        self.out = out
        self.path = out / RESULTS_FILE
        self.rows: dict[int, Row] = {} if restart else self._existing()
        self._file: TextIO | None = None

    def _existing(self) -> dict[int, Row]:
        meta_path = self.out / META_FILE
        if not self.path.exists():
            return {}
        try:
            meta = json.loads(meta_path.read_text())
            text = self.path.read_text()
        except (OSError, ValueError) as exc:
            raise _stale(self.out, f"cannot read {META_FILE}: {exc}") from None
        if not isinstance(meta, dict) or meta.get("digest") != self.sweep.digest:
            raise _stale(self.out, "its sweep file or base input differ")
        return _parse_rows(self.sweep, text, self.out)

    def open(self) -> None:
        """Write the finished rows back (dropping a cut line) and open the file to append."""
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            meta = {
                "name": self.sweep.file.name,
                "source": self.sweep.source,
                "digest": self.sweep.digest,
                "points": len(self.sweep.points),
                "columns": list(self.sweep.columns),
            }
            (self.out / META_FILE).write_text(json.dumps(meta, indent=1) + "\n")
            self._rewrite(sorted(self.rows.values(), key=lambda r: r.index))
            self._file = self.path.open("a", encoding="utf-8", newline="")
        except OSError as exc:
            raise InputError(
                f"cannot write the results: {exc.strerror or exc}",
                expected="a directory gpuplane may create and write",
                location=Location(source=str(self.out), field="--out"),
            ) from None

    def add(self, row: Row) -> None:
        """Keep a finished point: appended and flushed, so a kill after this keeps it."""
        assert self._file is not None, "open() first"
        self.rows[row.index] = row
        self._file.write(_line(row.cells))
        self._file.flush()

    def finish(self) -> Path:
        """Every row in point order, written to a new file that replaces the old one."""
        self.close()
        self._rewrite(sorted(self.rows.values(), key=lambda r: r.index))
        return self.path

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _rewrite(self, rows: list[Row]) -> None:
        tmp = self.path.with_suffix(".csv.tmp")
        with tmp.open("w", encoding="utf-8", newline="") as f:
            f.write(_line(self.sweep.columns))
            for row in rows:
                f.write(_line(row.cells))
        os.replace(tmp, self.path)
