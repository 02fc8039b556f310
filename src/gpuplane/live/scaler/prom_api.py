"""Instant queries over Prometheus's HTTP API (``GET /api/v1/query?query=...&time=...``), read
the way KEDA's Prometheus scaler reads them (``pkg/scalers/prometheus_scaler.go``).

- One number per query: a ``vector`` of one element, or a ``scalar`` (KEDA's scaler fails to
  decode a scalar; a scaler computing several signals is better served by accepting
  ``scalar(...)`` too). More than one element is KEDA's error ``prometheus query <q> returned
  multiple elements``: the query must aggregate.
- An empty vector is "no data" (None) with ``ignoreNullValues`` (KEDA's default, where it reads
  0; the caller decides: 0 for a gauge, unknown for a latency); without it, an error.
  NaN and ±Inf likewise (``histogram_quantile`` over an empty window is NaN).
- Transient failures — connection refused or reset, a timeout, HTTP 429 or 5xx — are retried
  ``retries`` times with a doubling back-off from 0.1 s, then reported as ``unavailable``;
  HTTP 400 (``bad_data``: the query does not parse) is the query's fault and not retried.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from enum import StrEnum

import aiohttp

RETRY_BASE_S = 0.1


class PromErrorKind(StrEnum):
    UNAVAILABLE = "unavailable"  # Prometheus cannot be reached or failed
    BAD_QUERY = "bad_query"  # Prometheus rejected the query
    BAD_RESULT = "bad_result"  # the answer is not one number (several series, empty, NaN)


class PrometheusError(Exception):
    def __init__(self, kind: PromErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True, slots=True)
class PromSettings:
    address: str
    timeout_s: float = 5.0
    retries: int = 2
    ignore_null_values: bool = True


class _Transient(Exception):
    pass


def _number(query: str, raw: object, ignore_null: bool) -> float | None:
    if not (isinstance(raw, list) and len(raw) == 2):
        raise PrometheusError(PromErrorKind.BAD_RESULT, f"prometheus query {query} bad sample")
    try:
        value = float(raw[1])
    except (TypeError, ValueError):
        raise PrometheusError(
            PromErrorKind.BAD_RESULT, f"prometheus query {query} returned {raw[1]!r}"
        ) from None
    if math.isfinite(value):
        return value
    if ignore_null:
        return None
    raise PrometheusError(PromErrorKind.BAD_RESULT, f"prometheus query {query} returned {value}")


def read_result(query: str, body: object, ignore_null: bool) -> float | None:
    """The one number of a ``/api/v1/query`` JSON answer (None: no data)."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, dict) or not isinstance(body, dict) or body.get("status") != "success":
        raise PrometheusError(PromErrorKind.BAD_RESULT, f"prometheus query {query}: not a result")
    kind, result = data.get("resultType"), data.get("result")
    if kind == "scalar":
        return _number(query, result, ignore_null)
    if kind != "vector" or not isinstance(result, list):
        raise PrometheusError(
            PromErrorKind.BAD_RESULT,
            f"prometheus query {query} returned a {kind}, expected a vector or a scalar",
        )
    if len(result) > 1:
        raise PrometheusError(
            PromErrorKind.BAD_RESULT, f"prometheus query {query} returned multiple elements"
        )
    if not result:
        if ignore_null:
            return None
        raise PrometheusError(
            PromErrorKind.BAD_RESULT,
            f"prometheus metrics {query!r} target may be lost, the result is empty",
        )
    sample = result[0].get("value") if isinstance(result[0], dict) else None
    return _number(query, sample, ignore_null)


class PromApi:
    """Instant queries against one Prometheus, on a session the caller owns."""

    def __init__(self, session: aiohttp.ClientSession, settings: PromSettings) -> None:
        self.session = session
        self.settings = settings
        self.url = f"{settings.address}/api/v1/query"

    async def query(self, query: str, at_s: float) -> float | None:
        last = ""
        for attempt in range(self.settings.retries + 1):
            if attempt:
                await asyncio.sleep(RETRY_BASE_S * 2 ** (attempt - 1))
            try:
                body = await self._get(query, at_s)
            except _Transient as err:
                last = str(err)
                continue
            return read_result(query, body, self.settings.ignore_null_values)
        tries = self.settings.retries + 1
        raise PrometheusError(
            PromErrorKind.UNAVAILABLE,
            f"prometheus at {self.settings.address} unavailable after {tries} tries: {last}",
        )

    async def _get(self, query: str, at_s: float) -> object:
        params = {"query": query, "time": f"{at_s:.3f}"}
        timeout = aiohttp.ClientTimeout(total=self.settings.timeout_s)
        try:
            async with self.session.get(self.url, params=params, timeout=timeout) as resp:
                if resp.status == 429 or resp.status >= 500:
                    raise _Transient(f"HTTP {resp.status}")
                if resp.status == 400:
                    text = (await resp.text())[:300]
                    raise PrometheusError(
                        PromErrorKind.BAD_QUERY, f"prometheus rejected query {query!r}: {text}"
                    )
                if resp.status != 200:
                    raise PrometheusError(
                        PromErrorKind.UNAVAILABLE,
                        f"prometheus query api returned error. status: {resp.status}",
                    )
                return await resp.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, ValueError) as err:
            raise _Transient(f"{type(err).__name__}: {err}".rstrip(": ")) from None
