"""The HTTP families vLLM's ``/metrics`` carries next to the engine's (prometheus-fastapi-
instrumentator ``default()``): ``http_requests_total{handler,method,status}`` with the status
grouped (``2xx``, ``4xx``, ``5xx``), ``http_request_duration_seconds{handler,method}`` (buckets
0.1, 0.5, 1) and ``http_request_duration_highr_seconds`` (no labels, 0.01 .. 60). vLLM leaves
``/metrics``, ``/health``, ``/load``, ``/ping``, ``/version`` out; so does this middleware.
The size summaries are not kept."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Histogram

# The emulator's NIXL read (live/emulator/nixl.py) stands in for NIXL's side channel, which is not
# an HTTP route of vLLM's server: left out too.
EXCLUDED = frozenset({"/metrics", "/health", "/load", "/ping", "/version", "/gpuplane/nixl/read"})
HIGHR_BUCKETS = (
    0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5,
    5.0, 7.5, 10.0, 30.0, 60.0,
)  # fmt: skip

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class HttpMetrics:
    """The HTTP families on ``registry`` and the aiohttp middleware that fills them."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter(
            "http_requests",
            "Total number of requests by method, status and handler.",
            ("method", "status", "handler"),
            registry=registry,
        )
        self.duration = Histogram(
            "http_request_duration_seconds",
            "Latency with only few buckets by handler.",
            ("method", "handler"),
            buckets=(0.1, 0.5, 1.0),
            registry=registry,
        )
        self.highr = Histogram(
            "http_request_duration_highr_seconds",
            "Latency with many buckets but no API specific labels.",
            buckets=HIGHR_BUCKETS,
            registry=registry,
        )

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        path = request.path
        if path in EXCLUDED:
            return await handler(request)
        start = time.perf_counter()
        status = 500
        try:
            response = await handler(request)
            status = response.status
            return response
        except web.HTTPException as exc:
            status = exc.status
            raise
        finally:
            seconds = time.perf_counter() - start
            route = request.match_info.route.resource
            name = route.canonical if route is not None else "none"
            self.requests.labels(request.method, f"{status // 100}xx", name).inc()
            self.duration.labels(request.method, name).observe(seconds)
            self.highr.observe(seconds)
