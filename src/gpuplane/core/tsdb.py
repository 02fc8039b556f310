"""An in-memory time-series store with Prometheus's data model, for the twin's metrics.

Series are identified by a metric name plus a label set, exactly as in Prometheus: the name is
the ``__name__`` label. Histograms are stored as their exposition series (``<name>_bucket`` with an
``le`` label, ``<name>_sum``, ``<name>_count``), so that a PromQL query written for a real cluster
(``histogram_quantile(0.9, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[1m])))``)
reads the same series here. Samples of one series must arrive in time order.

Lookup of the value at time ``t`` follows Prometheus 3's instant-vector rule: the newest sample at
or before ``t`` and newer than ``t`` minus the lookback delta (5 minutes by default), so a sample
exactly 5 minutes old is no longer seen, as with a range selector's ``(t - d, t]``; a series with
no such sample is absent from the result. Window starts are computed at Prometheus's millisecond
resolution (``window_start``), so that a boundary falls exactly on a sample taken at it.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

Labels = tuple[tuple[str, str], ...]
"""A label set without ``__name__``, sorted by label name."""

DEFAULT_LOOKBACK_S = 300.0
"""Prometheus's default ``--query.lookback-delta``."""


def window_start(t_s: float, span_s: float) -> float:
    """``t - span`` computed on whole milliseconds, as Prometheus computes it on its int64
    millisecond timestamps: ``300.7 - 300`` in floats is just below 0.7, which would let a sample
    at 0.7 into the window (Prometheus drops it)."""
    return (round(t_s * 1000) - round(span_s * 1000)) / 1000


def labels_of(mapping: Mapping[str, str]) -> Labels:
    """The canonical (sorted, name-free) form of a label mapping."""
    return tuple(sorted((k, str(v)) for k, v in mapping.items() if k != "__name__"))


@dataclass(frozen=True, slots=True)
class MetricSample:
    """One value of one series, as a scrape of an exporter yields it."""

    name: str
    labels: Labels
    value: float


@dataclass(slots=True)
class Series:
    """The samples of one (name, labels) series in time order."""

    name: str
    labels: Labels
    times: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)

    def append(self, t: float, value: float) -> None:
        if self.times and t < self.times[-1]:
            raise ValueError(f"sample for {self.name} at t={t} is older than {self.times[-1]}")
        if self.times and t == self.times[-1]:
            self.values[-1] = value
            return
        self.times.append(t)
        self.values.append(value)

    def at(self, t: float, lookback_s: float = DEFAULT_LOOKBACK_S) -> float | None:
        """The newest value at or before ``t`` and after ``t - lookback_s``, else None
        (Prometheus 3: ``vectorSelectorSingle`` drops a sample exactly the lookback delta old)."""
        i = bisect.bisect_right(self.times, t) - 1
        if i < 0 or self.times[i] <= window_start(t, lookback_s):
            return None
        return self.values[i]

    def window(self, start: float, end: float) -> tuple[list[float], list[float]]:
        """Samples with ``start < time <= end`` (Prometheus range-selector bounds)."""
        lo = bisect.bisect_right(self.times, start)
        hi = bisect.bisect_right(self.times, end)
        return self.times[lo:hi], self.values[lo:hi]


class SeriesStore:
    """All series of a run, indexed by metric name."""

    def __init__(self) -> None:
        self._by_name: dict[str, dict[Labels, Series]] = {}

    def add(self, t: float, samples: Iterable[MetricSample]) -> None:
        """Record one scrape: every sample at time ``t``."""
        for s in samples:
            self.append(s.name, s.labels, t, s.value)

    def append(self, name: str, labels: Labels, t: float, value: float) -> None:
        by_labels = self._by_name.setdefault(name, {})
        series = by_labels.get(labels)
        if series is None:
            series = by_labels[labels] = Series(name, labels)
        series.append(t, value)

    def series(self, name: str) -> Iterator[Series]:
        """Every series of a metric name (none if the name was never recorded)."""
        return iter(self._by_name.get(name, {}).values())

    def names(self) -> list[str]:
        return sorted(self._by_name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name
