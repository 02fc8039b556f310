"""A run's files read back: summary.json, events.jsonl, timeseries.csv, resolved-config.yaml,
and the tidy series files when the run wrote them (``twin.series``; older runs lack them)."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import read_user_text
from gpuplane.twin.series import SERIES_FILES

RUN_FILES = ("summary.json", "events.jsonl", "timeseries.csv", "resolved-config.yaml")
# file -> entity -> metric -> (times, values)
Series = Mapping[str, Mapping[str, tuple[tuple[float, ...], tuple[float, ...]]]]


@dataclass(frozen=True, slots=True)
class RunData:
    summary: Mapping[str, Any]
    events: tuple[Mapping[str, Any], ...]
    columns: Mapping[str, tuple[float, ...]]  # timeseries.csv, column by column
    config: Mapping[str, Any]  # resolved-config.yaml: seed, until_s, warnings, scenario
    series: Mapping[str, Series] = field(default_factory=dict)  # the files present

    @property
    def until_s(self) -> float:
        return float(self.summary.get("until_s", self.config.get("until_s", 0.0)))

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(str(w) for w in self.config.get("warnings", ()))

    @property
    def pools(self) -> tuple[Mapping[str, Any], ...]:
        scenario = self.config.get("scenario") or {}
        return tuple(scenario.get("node_pools") or ())


def _columns(text: str) -> dict[str, tuple[float, ...]]:
    rows = list(csv.DictReader(text.splitlines()))
    if not rows:
        return {}
    return {name: tuple(float(r[name]) for r in rows) for name in rows[0]}


def _series(text: str) -> Series:
    out: dict[str, dict[str, tuple[list[float], list[float]]]] = {}
    for r in csv.DictReader(text.splitlines()):
        times, values = out.setdefault(r["entity"], {}).setdefault(r["metric"], ([], []))
        times.append(float(r["t_s"]))
        values.append(float(r["value"]))
    return {
        e: {m: (tuple(t), tuple(v)) for m, (t, v) in metrics.items()} for e, metrics in out.items()
    }


def read_run(run_dir: Path) -> RunData:
    """InputError naming the file when one is missing or unreadable."""
    texts = {}
    for name in RUN_FILES:
        path = run_dir / name
        try:
            texts[name] = read_user_text(path)
        except OSError as exc:
            raise InputError(
                f"cannot read {name}: {exc.strerror or exc}",
                expected="a directory `gpuplane simulate --out` wrote",
                location=Location(source=str(path)),
            ) from None
    series_texts = {}
    for name in SERIES_FILES:
        path = run_dir / name
        if path.is_file():
            series_texts[name] = read_user_text(path)
    try:
        return RunData(
            summary=json.loads(texts["summary.json"]),
            events=tuple(json.loads(line) for line in texts["events.jsonl"].splitlines() if line),
            columns=_columns(texts["timeseries.csv"]),
            config=yaml.safe_load(texts["resolved-config.yaml"]) or {},
            series={name: _series(text) for name, text in series_texts.items()},
        )
    except (ValueError, KeyError, yaml.YAMLError) as exc:
        raise InputError(
            f"the run's files do not parse: {exc}",
            expected="files `gpuplane simulate` wrote, unchanged",
            location=Location(source=str(run_dir)),
        ) from None
