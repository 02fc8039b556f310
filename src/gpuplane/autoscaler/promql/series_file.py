"""Small sample files for ``gpuplane autoscale promql``: JSON or CSV -> a SeriesStore.

JSON: ``{"series": [{"name": "http_requests_total", "labels": {"job": "api"},
"samples": [[0, 1.0], [15, 4.0]]}]}`` (times in seconds, values numbers or "NaN"/"+Inf").

CSV: a header with ``t``, ``name`` and ``value`` columns; every other column is a label (an
empty cell means the series does not have that label). Samples of one series must be in time
order, as a scrape delivers them.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gpuplane.core.errors import InputError, Location
from gpuplane.core.nesting import check_json_depth
from gpuplane.core.tsdb import SeriesStore, labels_of
from gpuplane.core.validation import validate_model
from gpuplane.core.yamlio import DuplicateKeyError, load_fast, unique_pairs

_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def _number(value: object) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a number")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if text in ("NaN", "+Inf", "Inf", "-Inf"):
            return float(text.replace("Inf", "inf").replace("NaN", "nan"))
        return float(text)
    raise ValueError(f"{value!r} is not a number")


class SeriesIn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(description="the metric name")
    labels: dict[str, str] = Field(default_factory=dict)
    samples: list[tuple[float, float | str]] = Field(description="[time_s, value] pairs")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _METRIC_NAME.fullmatch(v):
            raise ValueError(f"{v!r} is not a valid metric name")
        return v

    @field_validator("labels")
    @classmethod
    def _labels(cls, v: dict[str, str]) -> dict[str, str]:
        for k in v:
            if not _LABEL_NAME.fullmatch(k) or k.startswith("__"):
                raise ValueError(f"{k!r} is not a valid label name")
        return v


class SeriesFileIn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    series: list[SeriesIn]


def _add(
    store: SeriesStore, sample: tuple[str, dict[str, str], float, float], at: Location
) -> None:
    """One sample; out of order, or a second value at a timestamp, is refused as the
    Prometheus TSDB refuses it (``out of order sample``, ``duplicate sample for timestamp``;
    the same value again is accepted and kept once, as there)."""
    name, labels, t, v = sample
    key = labels_of(labels)
    last = next((s for s in store.series(name) if s.labels == key), None)
    if last is not None and last.times and last.times[-1] == t and last.values[-1] != v:
        same = math.isnan(v) and math.isnan(last.values[-1])
        if not same:
            raise InputError(
                f"duplicate sample for timestamp {t:g} of {name} (values {last.values[-1]:g} "
                f"and {v:g})",
                expected="one value per series and timestamp",
                location=at,
            )
    try:
        store.append(name, key, t, v)
    except ValueError as err:
        raise InputError(
            str(err), expected="samples of a series in time order", location=at
        ) from None


def _from_json(data: Any, source: str) -> SeriesStore:
    try:
        model = validate_model(SeriesFileIn, data)
    except InputError as err:
        raise err.located(source) from None
    store = SeriesStore()
    for i, s in enumerate(model.series):
        for j, (t, raw) in enumerate(s.samples):
            where = f"series[{i}].samples[{j}]"
            try:
                value = _number(raw)
            except ValueError as err:
                raise InputError(
                    str(err),
                    expected="a number, NaN or +Inf",
                    location=Location(source, field=where),
                ) from None
            if not math.isfinite(t):
                raise InputError(f"time {t} is not finite", location=Location(source, field=where))
            _add(store, (s.name, s.labels, t, value), Location(source, field=where))
    return store


def _from_csv(text: str, source: str) -> SeriesStore:
    reader = csv.DictReader(io.StringIO(text))
    try:
        header = reader.fieldnames or []
    except csv.Error as err:
        raise InputError(f"not a valid CSV header ({err})", location=Location(source, 1)) from None
    missing = [c for c in ("t", "name", "value") if c not in header]
    if missing:
        raise InputError(
            f"CSV header lacks {', '.join(missing)}",
            expected="columns t, name, value and one column per label",
            location=Location(source, 1),
        )
    store = SeriesStore()
    try:
        for row in reader:
            _csv_row(store, row, source, reader.line_num)
    except csv.Error as err:  # a field over csv's size limit, a NUL byte...
        raise InputError(
            f"not a valid CSV file ({err})", location=Location(source, max(reader.line_num, 1))
        ) from None
    return store


def _csv_row(store: SeriesStore, row: dict[str, Any], source: str, line: int) -> None:
    try:
        t, value = float(row["t"]), _number(row["value"])
    except (TypeError, ValueError):
        raise InputError(
            f"bad t or value: {row.get('t')!r}, {row.get('value')!r}",
            expected="numbers",
            location=Location(source, line),
        ) from None
    if not math.isfinite(t):
        raise InputError(
            f"time {row['t']!r} is not finite", expected="seconds", location=Location(source, line)
        )
    name = (row["name"] or "").strip()
    if not _METRIC_NAME.fullmatch(name):
        raise InputError(f"{name!r} is not a valid metric name", location=Location(source, line))
    labels = {
        k: v
        for k, v in row.items()
        if k not in ("t", "name", "value") and k and isinstance(v, str) and v
    }
    _add(store, (name, labels, t, value), Location(source, line))


def load_series_text(text: str, source: str) -> SeriesStore:
    """A store from a JSON (starts with ``{``) or CSV sample file."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        check_json_depth(text, source)
        try:
            data = json.loads(text, object_pairs_hook=unique_pairs)
        except DuplicateKeyError:
            load_fast(text, source)  # raises the duplicate key's located error
            raise InputError("duplicate key", location=Location(source)) from None
        except json.JSONDecodeError as err:
            raise InputError(
                f"not valid JSON: {err.msg}",
                expected="a JSON object with 'series'",
                location=Location(source, err.lineno),
            ) from None
        return _from_json(data, source)
    if not stripped:
        raise InputError(
            "the file is empty", expected="JSON or CSV samples", location=Location(source, 1)
        )
    return _from_csv(text, source)
