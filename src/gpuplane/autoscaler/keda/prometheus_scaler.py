"""KEDA's Prometheus scaler (``pkg/scalers/prometheus_scaler.go``).

Metadata: ``serverAddress``, ``query`` and ``threshold`` are required; ``activationThreshold``
(default 0), ``namespace``, ``queryParameters``/``customHeaders`` (``k=v,k2=v2``),
``ignoreNullValues`` (default **true**), ``unsafeSsl``, ``timeout`` are optional.

Every poll runs one instant query and reads the answer the way KEDA does:

- an empty result is 0 when ``ignoreNullValues`` is true, else an error;
- more than one series is always an error (``prometheus query <q> returned multiple elements``):
  the query must aggregate down to one series;
- a sample value of ``+Inf``/``-Inf``/``NaN`` is 0 with ``ignoreNullValues``, else an error;
- a scalar result (``resultType: scalar``) does not decode into KEDA's result type and fails.

The trigger is *active* when the value is strictly above ``activationThreshold``; the metric the
HPA reads is the value in milli-units, truncated (``GenerateMetricInMili``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from gpuplane.autoscaler.keda.model import GO_FALSE, GO_TRUE
from gpuplane.autoscaler.promql import evaluate
from gpuplane.autoscaler.promql.parser import parse, parse_query
from gpuplane.autoscaler.promql.values import LabelSet, Scalar
from gpuplane.core.duration import parse_duration_s
from gpuplane.core.errors import InputError, Location
from gpuplane.core.tsdb import SeriesStore

REQUIRED = ("serverAddress", "query", "threshold")
KNOWN = (
    *REQUIRED,
    "activationThreshold",
    "namespace",
    "queryParameters",
    "customHeaders",
    "ignoreNullValues",
    "unsafeSsl",
    "timeout",
    "awsRegion",
    "identityOwner",
    "authModes",
)


@dataclass(frozen=True, slots=True)
class PrometheusMetadata:
    server_address: str
    query: str
    threshold: float
    activation_threshold: float = 0.0
    namespace: str = ""
    query_parameters: tuple[tuple[str, str], ...] = ()
    custom_headers: tuple[tuple[str, str], ...] = ()
    ignore_null_values: bool = True
    unsafe_ssl: bool = False
    timeout_s: float | None = None


def _float(meta: Mapping[str, str], key: str, field_path: str, default: float | None) -> float:
    raw = meta.get(key)
    if raw is None or raw == "":
        if default is None:
            raise InputError(
                f'missing required parameter "{key}" in [triggerMetadata]',
                expected=f"{key}: a number as a quoted string",
                location=Location(field=f"{field_path}.{key}"),
            )
        return default
    try:
        return float(raw.strip())
    except ValueError:
        raise InputError(
            f'unable to parse "{key}" value {raw!r} as a number',
            expected='a number such as "5" or "0.5"',
            location=Location(field=f"{field_path}.{key}"),
        ) from None


def _bool(meta: Mapping[str, str], key: str, field_path: str, default: bool) -> bool:
    raw = meta.get(key)
    if raw is None or raw == "":
        return default
    if raw in GO_TRUE:
        return True
    if raw in GO_FALSE:
        return False
    raise InputError(
        f'unable to parse "{key}" value {raw!r} as a boolean',
        expected='"true" or "false"',
        location=Location(field=f"{field_path}.{key}"),
    )


def _pairs(meta: Mapping[str, str], key: str, field_path: str) -> tuple[tuple[str, str], ...]:
    raw = meta.get(key, "")
    out: list[tuple[str, str]] = []
    for part in filter(None, (p.strip() for p in raw.split(","))):
        name, sep, value = part.partition("=")
        if not sep or not name.strip():
            raise InputError(
                f"{key}: {part!r} is not key=value",
                expected="key=value pairs separated by commas",
                location=Location(field=f"{field_path}.{key}"),
            )
        out.append((name.strip(), value.strip()))
    return tuple(out)


def parse_prometheus_metadata(meta: Mapping[str, str], field_path: str) -> PrometheusMetadata:
    """Validate a Prometheus trigger's metadata; errors point at ``field_path.<key>``."""
    unknown = sorted(set(meta) - set(KNOWN))
    if unknown:
        raise InputError(
            f"unknown prometheus trigger parameter {unknown[0]!r}",
            expected=f"one of {', '.join(KNOWN)}",
            location=Location(field=f"{field_path}.{unknown[0]}"),
        )
    for key in ("serverAddress", "query"):
        if not meta.get(key):
            raise InputError(
                f'missing required parameter "{key}" in [triggerMetadata]',
                expected=f"{key}: a non-empty string",
                location=Location(field=f"{field_path}.{key}"),
            )
    threshold = _float(meta, "threshold", field_path, None)
    if not threshold > 0 or math.isinf(threshold):
        raise InputError(
            f"threshold {meta['threshold']!r} must be a number > 0",
            expected="a positive target: the HPA KEDA creates rejects a target of 0",
            location=Location(field=f"{field_path}.threshold"),
        )
    timeout = meta.get("timeout")
    try:
        parse(meta["query"], source=f"{field_path}.query")
    except InputError as err:
        raise InputError(
            err.problem, expected=err.expected, location=Location(field=f"{field_path}.query")
        ) from None
    return PrometheusMetadata(
        server_address=meta["serverAddress"],
        query=meta["query"],
        threshold=threshold,
        activation_threshold=_float(meta, "activationThreshold", field_path, 0.0),
        namespace=meta.get("namespace", ""),
        query_parameters=_pairs(meta, "queryParameters", field_path),
        custom_headers=_pairs(meta, "customHeaders", field_path),
        ignore_null_values=_bool(meta, "ignoreNullValues", field_path, True),
        unsafe_ssl=_bool(meta, "unsafeSsl", field_path, False),
        timeout_s=None if not timeout else parse_duration_s(timeout),
    )


@dataclass(frozen=True, slots=True)
class QueryAnswer:
    """What Prometheus's ``/api/v1/query`` answered: a status code and either an instant vector
    (``series``: labels and the sample value as Prometheus formats it) or a scalar."""

    status: int = 200
    series: tuple[tuple[LabelSet, float], ...] = ()
    scalar: float | None = None
    error: str = ""


class PromQueryApi(Protocol):
    """The Prometheus HTTP API, as far as KEDA uses it."""

    def query(self, query: str, t_s: float) -> QueryAnswer: ...


@dataclass
class SeriesStorePrometheus:
    """A Prometheus server over the twin's series store (the PromQL subset evaluates).

    It answers as ``/api/v1/query`` does (``web/api/v1``): a query that does not parse is
    ``400 bad_data``; one that fails while evaluating is ``422 execution``, and so is any other
    exception raised inside the evaluation, as Prometheus's engine recovers a panic into an
    ``unexpected error``. Nothing raises out of ``query``: a failure reaches KEDA as an answer.
    """

    store: SeriesStore
    extra: dict[str, QueryAnswer] = field(default_factory=dict)

    def query(self, query: str, t_s: float) -> QueryAnswer:
        if query in self.extra:
            return self.extra[query]
        try:
            node = parse_query(query)
        except InputError as err:
            return QueryAnswer(status=400, error=f"bad_data: {err}")
        try:
            value = evaluate(node, self.store, t_s, text=query)
        except InputError as err:
            return QueryAnswer(status=422, error=f"execution: {err}")
        except Exception as err:  # a bug in the evaluator must not take the poll down
            return QueryAnswer(status=422, error=f"execution: unexpected error: {describe(err)}")
        if isinstance(value, Scalar):
            return QueryAnswer(scalar=value.value)
        return QueryAnswer(series=tuple((s.labels, s.value) for s in value.samples))


def describe(err: BaseException) -> str:
    """An unexpected exception in one line: its type and its message."""
    text = str(err)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


class ScalerError(Exception):
    """A scaler could not produce a value this poll (KEDA's error text)."""


def _go_f(value: float) -> str:
    """Go's ``%f`` of an infinity or NaN."""
    if math.isnan(value):
        return "NaN"
    return "+Inf" if value > 0 else "-Inf"


def read_answer(meta: PrometheusMetadata, answer: QueryAnswer) -> float:
    """``ExecutePromQuery`` after the HTTP call: the value, or ScalerError."""
    if not 200 <= answer.status <= 299:
        raise ScalerError(f"prometheus query api returned error. status: {answer.status}")
    if answer.scalar is not None:
        raise ScalerError(
            "json: cannot unmarshal number into Go struct field .data.result of type struct "
            '{ Metric struct {} "json:\\"metric\\""; Value []interface {} "json:\\"value\\"" }'
        )
    if not answer.series:
        if meta.ignore_null_values:
            return 0.0
        raise ScalerError("prometheus metrics 'prometheus' target may be lost, the result is empty")
    if len(answer.series) > 1:
        raise ScalerError(f"prometheus query {meta.query} returned multiple elements")
    value = answer.series[0][1]
    if math.isinf(value) or math.isnan(value):
        if meta.ignore_null_values:
            return 0.0
        raise ScalerError(f"prometheus query returns {_go_f(value)}")
    return value


def metric_in_milli(value: float) -> int:
    """``GenerateMetricInMili``: ``int64(value * 1000)`` (truncation toward zero)."""
    scaled = value * 1000
    return math.trunc(scaled) if math.isfinite(scaled) else 0
