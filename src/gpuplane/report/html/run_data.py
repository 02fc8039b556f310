"""A run's files read back: summary.json, events.jsonl, timeseries.csv, resolved-config.yaml."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import read_user_text

RUN_FILES = ("summary.json", "events.jsonl", "timeseries.csv", "resolved-config.yaml")


@dataclass(frozen=True, slots=True)
class RunData:
    summary: Mapping[str, Any]
    events: tuple[Mapping[str, Any], ...]
    columns: Mapping[str, tuple[float, ...]]  # timeseries.csv, column by column
    config: Mapping[str, Any]  # resolved-config.yaml: seed, until_s, warnings, scenario

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
    try:
        return RunData(
            summary=json.loads(texts["summary.json"]),
            events=tuple(json.loads(line) for line in texts["events.jsonl"].splitlines() if line),
            columns=_columns(texts["timeseries.csv"]),
            config=yaml.safe_load(texts["resolved-config.yaml"]) or {},
        )
    except (ValueError, KeyError, yaml.YAMLError) as exc:
        raise InputError(
            f"the run's files do not parse: {exc}",
            expected="files `gpuplane simulate` wrote, unchanged",
            location=Location(source=str(run_dir)),
        ) from None
