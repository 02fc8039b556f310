"""Engines' metrics in the Prometheus text format, through prometheus-client.

:class:`EngineCollector` is a custom collector (``prometheus_client.registry.Collector``): at
each ``collect`` it reads the engines and yields metric families, so a registry holding it can
be served or rendered with ``generate_latest`` like any exporter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from gpuplane.serving.metrics.exporter import Series, engine_series
from gpuplane.serving.metrics.families import Family
from gpuplane.serving.metrics.histogram import Histogram, go_float

if TYPE_CHECKING:
    from gpuplane.serving.engine.engine import Engine


class EngineCollector(Collector):
    """Collects the metrics of some engines, each with its own extra (target) labels."""

    def __init__(self, engines: Callable[[], Iterable[tuple[Engine, Mapping[str, str]]]]) -> None:
        self._engines = engines

    def collect(self) -> Iterator[Metric]:
        series: list[Series] = []
        for engine, extra in self._engines():
            series += engine_series(engine, extra)
        yield from families_of(series)


def families_of(series: Sequence[Series]) -> Iterator[Metric]:
    """prometheus-client metric families holding these series (one family per name)."""
    by_name: dict[str, list[Series]] = {}
    for s in series:
        by_name.setdefault(s.family.name, []).append(s)
    for group in by_name.values():
        fam = group[0].family
        names = sorted({k for s in group for k in s.labels} - {"le"})
        metric = _empty(fam, names)
        for s in group:
            values = [s.labels.get(k, "") for k in names]
            if isinstance(s.value, Histogram):
                assert isinstance(metric, HistogramMetricFamily)
                buckets = [(go_float(le), float(c)) for le, c in s.value.cumulative()]
                metric.add_metric(values, buckets, s.value.sum)
            else:
                assert isinstance(metric, GaugeMetricFamily | CounterMetricFamily)
                metric.add_metric(values, s.value)
        yield metric


def _empty(fam: Family, labels: list[str]) -> Metric:
    if fam.kind == "gauge":
        return GaugeMetricFamily(fam.name, fam.help, labels=labels)
    if fam.kind == "counter":
        return CounterMetricFamily(fam.name, fam.help, labels=labels)
    return HistogramMetricFamily(fam.name, fam.help, labels=labels)


def exposition(engines: Iterable[tuple[Engine, Mapping[str, str]]]) -> str:
    """The text a scrape of these engines' ``/metrics`` returns."""
    snapshot = list(engines)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(EngineCollector(lambda: snapshot))
    return generate_latest(registry).decode("utf-8")
