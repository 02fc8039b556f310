"""The run's tidy time series beside timeseries.csv: one row per (t_s, entity, metric, value).

``pools_timeseries.csv`` (per node pool), ``serving_timeseries.csv`` (per serving service) and
``autoscaling_timeseries.csv`` (per autoscaler) hold these rows, on the metrics sampler's grid
(t = 0 and every ``metrics_interval_s``). A component that offers series implements
``SeriesSource``; it only reads what its decisions already computed, so the series change no
decision and add no event to the loop (the run's summary and timeseries.csv stay the same).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from typing import NamedTuple, Protocol, runtime_checkable

SERIES_COLUMNS = ("t_s", "entity", "metric", "value")
SERIES_FILES = ("pools_timeseries.csv", "serving_timeseries.csv", "autoscaling_timeseries.csv")


class SeriesRow(NamedTuple):
    t_s: float
    entity: str
    metric: str
    value: float


@runtime_checkable
class SeriesSource(Protocol):
    def series(self, grid: Sequence[float]) -> dict[str, list[SeriesRow]]:
        """Rows per file name (one of ``SERIES_FILES``), on the sampler's ``grid`` of times."""
        ...


class SeriesLog:
    """Values a component saw at its own times (polls, syncs); ``on_grid`` keeps, at each grid
    time, the last value seen at or before it (what a scrape at that time would read)."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], tuple[list[float], list[float]]] = {}

    def record(self, t_s: float, entity: str, metric: str, value: float) -> None:
        value = round(value, 6)
        times, values = self._seen.setdefault((entity, metric), ([], []))
        if times and times[-1] == t_s:
            values[-1] = value
        else:
            times.append(t_s)
            values.append(value)

    def on_grid(self, grid: Sequence[float]) -> list[SeriesRow]:
        rows = []
        for (entity, metric), (times, values) in self._seen.items():
            for t in grid:
                i = bisect.bisect_right(times, t) - 1
                if i >= 0:
                    rows.append(SeriesRow(t, entity, metric, values[i]))
        return rows


def merged(parts: Iterable[dict[str, list[SeriesRow]]]) -> dict[str, tuple[SeriesRow, ...]]:
    """Every source's rows per file, in (time, entity, metric) order."""
    out: dict[str, list[SeriesRow]] = {}
    for part in parts:
        for name, rows in part.items():
            out.setdefault(name, []).extend(rows)
    return {name: tuple(sorted(out[name], key=lambda r: r[:3])) for name in sorted(out)}
