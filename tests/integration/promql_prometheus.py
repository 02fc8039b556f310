"""A Prometheus HTTP API on loopback over a recorded ``SeriesStore``: ``/api/v1/query`` evaluates
the query with gpuplane's PromQL at ``time=`` and answers in Prometheus's JSON form (a vector's
samples with their labels, values as strings the way Go's ``strconv.FormatFloat(v, 'f', -1,
64)`` writes them, NaN and ±Inf by name). ``fixed`` answers named queries with a number instead
(series the recording does not hold, such as kube-state-metrics')."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal

from aiohttp import web

from gpuplane.autoscaler.promql import Scalar, evaluate
from gpuplane.core.tsdb import SeriesStore
from tests.integration.loopback import QueryApi


def go_float(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    text = format(Decimal(repr(value)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


@dataclass
class PromqlPrometheus(QueryApi):
    store: SeriesStore
    fixed: dict[str, float] = field(default_factory=dict)
    queries: list[tuple[str, float]] = field(default_factory=list)
    runner: web.AppRunner | None = None
    port: int = 0

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _data(self, query: str, at_s: float) -> dict[str, object]:
        if query in self.fixed:
            return {"resultType": "scalar", "result": [at_s, go_float(self.fixed[query])]}
        value = evaluate(query, self.store, at_s)
        if isinstance(value, Scalar):
            return {"resultType": "scalar", "result": [at_s, go_float(value.value)]}
        result = [
            {"metric": s.labels_dict(), "value": [at_s, go_float(s.value)]} for s in value.samples
        ]
        return {"resultType": "vector", "result": result}

    async def _query(self, request: web.Request) -> web.Response:
        query, at_s = request.query["query"], float(request.query["time"])
        self.queries.append((query, at_s))
        body = {"status": "success", "data": self._data(query, at_s)}
        return web.json_response(body)
