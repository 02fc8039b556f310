"""Arrival traces: a CSV file with one row per arrival -> ``ArriveFromTrace``.

Times are numbers in ``time_unit`` or ISO 8601 datetimes (the Azure LLM inference traces write
``2023-11-16 18:17:03.9799600``; Python keeps microseconds). Either way each row's offset is taken
from the earliest row, multiplied by ``scale`` and shifted to ``start_at``. Durations are numbers
in ``time_unit`` or durations such as ``90s``; an empty cell leaves the workload's own run time.
"""

from __future__ import annotations

import csv
import io
import math
from datetime import datetime
from pathlib import Path

from gpuplane.core.duration import parse_duration_s
from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import read_user_text
from gpuplane.twin.scenario.schema import TraceArrivalConfig
from gpuplane.twin.scenario.spec import ArriveFromTrace, TraceArrival

UNIT_S = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
MAX_ROWS = 10_000_000


def _error(source: str, line: int | None, problem: str, expected: str) -> InputError:
    return InputError(problem, expected=expected, location=Location(source, line))


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _datetime_s(text: str) -> float | None:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        # Naive times are all read the same way, so only their differences matter.
        return (moment - datetime(1970, 1, 1)).total_seconds()
    return moment.timestamp()


def _column(header: list[str], name: str, source: str) -> int:
    if name not in header:
        raise _error(source, 1, f"no column {name!r}", f"one of {', '.join(header) or '(none)'}")
    return header.index(name)


def _read_rows(path: Path, source: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    try:
        text = read_user_text(path).removeprefix("\ufeff")
    except OSError as err:
        raise _error(
            source, None, f"cannot read the trace ({err.strerror})", "a CSV file"
        ) from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
        if header is None:
            raise _error(source, 1, "the file is empty", "a CSV file with a header row")
        rows = []
        for row in reader:
            if row:
                rows.append((reader.line_num, row))
            if len(rows) > MAX_ROWS:
                raise _error(source, reader.line_num, "too many rows", f"at most {MAX_ROWS}")
    except csv.Error as err:
        line = max(reader.line_num, 1)
        raise _error(source, line, f"not a valid CSV file ({err})", "a CSV file") from None
    return [h.strip() for h in header], rows


def _time_s(cell: str, unit: float, numeric: bool) -> float | None:
    if numeric:
        number = _number(cell)
        return None if number is None else number * unit
    return _datetime_s(cell)


def _duration_s(cell: str, unit: float) -> float | None:
    number = _number(cell)
    if number is not None:
        if number < 0:
            raise ValueError("negative")
        return number * unit
    return parse_duration_s(cell)


def load_trace(config: TraceArrivalConfig, path: Path) -> ArriveFromTrace:
    """The trace's arrivals; every mistake is an InputError at ``file:line``."""
    source = str(path)
    header, rows = _read_rows(path, source)
    time_col = _column(header, config.time_column, source)
    dur_col = (
        None if config.duration_column is None else _column(header, config.duration_column, source)
    )
    if config.limit is not None:
        rows = rows[: config.limit]
    if not rows:
        raise _error(source, 2, "the trace has no rows", "one row per arrival after the header")
    unit = UNIT_S[config.time_unit]
    first = rows[0][1][time_col].strip() if time_col < len(rows[0][1]) else ""
    numeric = _number(first) is not None  # the first row decides: numbers or datetimes
    parsed: list[tuple[float, float | None]] = []
    for line, row in rows:
        cell = row[time_col].strip() if time_col < len(row) else ""
        t = _time_s(cell, unit, numeric)
        if t is None:
            kind = "a number" if numeric else "an ISO datetime such as 2023-11-16 18:17:03.98"
            raise _error(source, line, f"{config.time_column} {cell!r} is not a time", kind)
        duration = None
        if dur_col is not None and dur_col < len(row) and row[dur_col].strip():
            try:
                duration = _duration_s(row[dur_col].strip(), unit)
            except (InputError, ValueError):
                raise _error(
                    source,
                    line,
                    f"{config.duration_column} {row[dur_col]!r} is not a duration",
                    f"a number of {config.time_unit} >= 0 or a duration such as 90s",
                ) from None
        parsed.append((t, duration))
    origin = min(t for t, _ in parsed)
    arrivals = sorted(
        (
            TraceArrival(t_s=config.start_at + (t - origin) * config.scale, duration_s=d)
            for t, d in parsed
        ),
        key=lambda a: a.t_s,
    )
    return ArriveFromTrace(source=source, rows=tuple(arrivals))
