"""Write a twin run's files: summary.json, events.jsonl, timeseries.csv, resolved-config.yaml,
and the tidy series ``twin.series`` names (pools_timeseries.csv, serving_timeseries.csv,
autoscaling_timeseries.csv; each only when the run has that kind of entity).

Every file is a pure function of the run result and the resolved scenario, so the same scenario
and seed give byte-identical files.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import yaml

from gpuplane.twin.metrics import COLUMNS
from gpuplane.twin.series import SERIES_COLUMNS, SeriesRow
from gpuplane.twin.simulation import RunResult


def events_jsonl(result: RunResult) -> str:
    return "".join(json.dumps(e.as_dict(), sort_keys=True) + "\n" for e in result.events)


def timeseries_csv(result: RunResult) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(COLUMNS), lineterminator="\n")
    writer.writeheader()
    for row in result.timeseries:
        writer.writerow(row)
    return buf.getvalue()


def series_csv(rows: tuple[SeriesRow, ...]) -> str:
    """Long form: t_s, entity, metric, value (``repr`` of the float: exact and stable)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(SERIES_COLUMNS)
    for r in rows:
        writer.writerow((r.t_s, r.entity, r.metric, r.value))
    return buf.getvalue()


WARNINGS_FILE = "warnings.txt"


def write_run(
    out_dir: Path, result: RunResult, resolved: dict[str, Any], warnings: tuple[str, ...]
) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    config = {
        "seed": result.seed,
        "until_s": result.until_s,
        "warnings": list(warnings),
        "scenario": resolved,
    }
    summary = result.summary.as_dict()
    if warnings:
        # Only when there are some: a clean run's files stay as they were.
        summary["warnings"] = list(warnings)
    files = {
        "summary.json": json.dumps(summary, indent=2, sort_keys=True) + "\n",
        "events.jsonl": events_jsonl(result),
        "timeseries.csv": timeseries_csv(result),
        "resolved-config.yaml": yaml.safe_dump(config, sort_keys=True, allow_unicode=True),
    }
    if warnings:
        files[WARNINGS_FILE] = "".join(f"{w}\n" for w in warnings)
    for name, rows in result.series.items():
        if rows:
            files[name] = series_csv(rows)
    written = []
    for name, text in files.items():
        path = out_dir / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
