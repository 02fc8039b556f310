"""A fake Prometheus HTTP API on loopback: ``/api/v1/query`` answers what the test wrote."""

from __future__ import annotations

from dataclasses import dataclass, field

from aiohttp import web

from tests.integration.loopback import QueryApi

Answer = float | None | list[float] | str
"""A number (one-element vector), None (empty vector), several numbers (a vector of several
series), or a string sample value such as "NaN"."""


@dataclass
class FakePrometheus(QueryApi):
    answers: dict[str, Answer] = field(default_factory=dict)
    status: int = 200
    queries: list[tuple[str, str]] = field(default_factory=list)
    runner: web.AppRunner | None = None
    port: int = 0

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _vector(self, answer: Answer, at: str) -> list[dict[str, object]]:
        if answer is None:
            return []
        values = answer if isinstance(answer, list) else [answer]
        return [
            {"metric": {"pod": f"p{i}"}, "value": [float(at), str(v)]} for i, v in enumerate(values)
        ]

    async def _query(self, request: web.Request) -> web.Response:
        query, at = request.query.get("query", ""), request.query.get("time", "0")
        self.queries.append((query, at))
        if self.status != 200:
            return web.json_response({"status": "error"}, status=self.status)
        result = self._vector(self.answers.get(query), at)
        body = {"status": "success", "data": {"resultType": "vector", "result": result}}
        return web.json_response(body)
