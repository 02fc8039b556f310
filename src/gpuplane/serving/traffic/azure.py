"""The Azure LLM inference traces (Azure/AzurePublicDataset, 2023 and 2024 releases).

Format (``AzureLLMInferenceDataset2023.md``): a CSV with a header and the columns
``TIMESTAMP`` (invocation time, ``2023-11-16 18:17:03.9799600``, up to 7 fractional digits),
``ContextTokens`` (prompt tokens) and ``GeneratedTokens`` (output tokens), one row per request,
sorted by time. Other columns are ignored. The 2023 files (``code``, ``conv``, about an hour each)
are in ``shared/data/traces``; cite Splitwise (Patel et al., ISCA 2024) when using them.

Every problem is reported with the file and line: a missing column, a malformed timestamp or
count, a count below 1, or a timestamp earlier than the row before.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from pathlib import Path
from typing import Any

import numpy as np

from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import read_user_text
from gpuplane.serving.traffic.trace import Trace

COLUMNS = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")
_TIMESTAMP = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]00:?00)?"
)


def parse_timestamp(text: str) -> float:
    """Seconds since the Unix epoch (UTC) of an Azure trace timestamp; ValueError if malformed."""
    m = _TIMESTAMP.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"{text!r} is not a timestamp like 2023-11-16 18:17:03.9799600")
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    midnight = dt.datetime(year, month, day, tzinfo=dt.UTC)  # raises ValueError on a bad date
    if hour > 23 or minute > 59 or second > 60:
        raise ValueError(f"{text!r} has an impossible time of day")
    frac = float(m.group(7)) if m.group(7) else 0.0
    return midnight.timestamp() + hour * 3600 + minute * 60 + second + frac


def _count(value: str, where: Location) -> int:
    try:
        n = int(value.strip())
    except ValueError:
        raise InputError(
            f"{value!r} is not a token count", expected="a whole number >= 1", location=where
        ) from None
    if n < 1:
        raise InputError(f"token count {n}", expected="a whole number >= 1", location=where)
    return n


def load_azure_trace(path: str | Path) -> Trace:
    """Read an Azure LLM inference trace CSV into a :class:`Trace` (times from the first row)."""
    source = str(path)
    try:
        text = read_user_text(Path(path))
    except OSError as err:
        raise InputError(
            f"cannot read the trace: {err.strerror}", location=Location(source)
        ) from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
        times, prompts, outputs = _rows(reader, header, _columns(header, source), source)
    except StopIteration:
        raise InputError(
            "the file is empty", expected="a CSV header", location=Location(source, 1)
        ) from None
    except csv.Error as err:
        where = Location(source, max(reader.line_num, 1))
        raise InputError(f"not a valid CSV file: {err}", location=where) from None
    if not times:
        raise InputError(
            "the trace has no requests", expected="at least one data row", location=Location(source)
        )
    arr = np.asarray(times, dtype=np.float64)
    return Trace(
        arr - arr[0],
        np.asarray(prompts, dtype=np.int64),
        np.asarray(outputs, dtype=np.int64),
        Path(source).name,
    )


def _rows(
    reader: Any, header: list[str], index: tuple[int, int, int], source: str
) -> tuple[list[float], list[int], list[int]]:
    """Every data row as (time, prompt tokens, output tokens); InputError at the first bad one."""
    times: list[float] = []
    prompts: list[int] = []
    outputs: list[int] = []
    for row in reader:
        line = reader.line_num
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) < len(header):
            raise InputError(
                f"{len(row)} fields",
                expected=f"{len(header)} fields like the header",
                location=Location(source, line),
            )
        t_loc = Location(source, line, "TIMESTAMP")
        try:
            t = parse_timestamp(row[index[0]])
        except ValueError as err:
            raise InputError(str(err), location=t_loc) from None
        if times and t < times[-1]:
            raise InputError(
                "timestamp earlier than the row before",
                expected="rows sorted by time",
                location=t_loc,
            )
        times.append(t)
        prompts.append(_count(row[index[1]], Location(source, line, "ContextTokens")))
        outputs.append(_count(row[index[2]], Location(source, line, "GeneratedTokens")))
    return times, prompts, outputs


def _columns(header: list[str], source: str) -> tuple[int, int, int]:
    names = [h.strip().lstrip("\ufeff") for h in header]
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise InputError(
            f"header lacks column(s) {', '.join(missing)} (found {', '.join(names) or 'nothing'})",
            expected="a header TIMESTAMP,ContextTokens,GeneratedTokens",
            location=Location(source, 1),
        )
    return names.index(COLUMNS[0]), names.index(COLUMNS[1]), names.index(COLUMNS[2])
