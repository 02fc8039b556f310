"""The router's HTTP service (aiohttp): OpenAI routes proxied to the engine the policy picks.

``POST /v1/completions`` and ``/v1/chat/completions``: the body is read for its model, prompt
(counted and cut into segments as the emulator does, for the prefix index) and session, the
policy picks a ready engine and the engine's answer is passed through as it arrives (SSE chunks
unchanged). Retries are off by default: an engine that fails fails the request (502); with
``retries`` N an engine that fails before answering anything (refused or dropped connection,
timeout before the headers) is replaced by the policy's pick among the engines not tried yet,
at most N times; once the answer has started, a failure ends the stream early. The route is
the twin's dispatcher's (``picker``): with no ready engine the answer is 503 with an OpenAI
error body; a prompt longer than every ready engine's ``max_model_len`` (from their
``/v1/models``) is answered 400 in vLLM's words (``errors.context_too_long``), as each engine
would answer it. ``GET /v1/models`` is forwarded to a
ready engine; ``/health`` is 200 while one engine is ready; ``/metrics`` has the router's own
families (below) and the HTTP families.

P/D: with ``--prefill-engine``/``--decode-engine`` engines a request the picker splits goes to a
prefill engine first (``prefill_hop``: ``max_tokens`` 1 and ``kv_transfer_params`` asking for a
remote decode), then to the decode engine with the ``kv_transfer_params`` the prefill answered;
the decode engine's answer is passed through. docs/live.md, "P/D disaggregation".

Router families: ``vllm:num_incoming_requests_total{model}`` (the production-stack router's
counter and label), ``gpuplane_router_routed_requests_total{server}``,
``gpuplane_router_no_engine_total``, ``gpuplane_router_prompt_too_long_total``,
``gpuplane_router_time_to_first_byte_seconds{server}`` and
``gpuplane_router_request_duration_seconds{server}`` (as the client of each engine sees them),
``gpuplane_router_engine_ready{server}``, ``gpuplane_router_retries_total{server}``; P/D:
``gpuplane_router_disaggregated_requests_total``,
``gpuplane_router_prefill_duration_seconds{server}``, ``gpuplane_router_prefill_failures_total``.

Engines come from URLs (``--engine``...) or from Services' EndpointSlices (``discovery``,
``--service``...), followed as pods come and go (:meth:`RouterService.sync_service`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
import uuid
from collections.abc import Sequence

import aiohttp
from aiohttp import web
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    generate_latest,
)

from gpuplane.core.errors import InputError
from gpuplane.live.openai.calls import CallKind, read_call
from gpuplane.live.openai.error_response import error_response
from gpuplane.live.openai.errors import ApiError, context_too_long
from gpuplane.live.openai.http_metrics import HttpMetrics
from gpuplane.live.openai.text import segments_of, text_tokens
from gpuplane.live.router.backends import Backend, parse_load, parse_max_model_len
from gpuplane.live.router.discovery import ServiceDiscovery, ServiceRef
from gpuplane.live.router.metrics import RouterMetrics
from gpuplane.live.router.picker import LiveRoute, Picker
from gpuplane.live.router.prefill_hop import PrefillAnswer, run_prefill
from gpuplane.serving.request import Request, RequestId
from gpuplane.serving.routing.dispatch import Refusal
from gpuplane.serving.routing.pd import PDSettings
from gpuplane.serving.routing.router import Role


class _Unsent(Exception):
    """The engine failed before the router sent the client anything: the request may go to
    another engine (``--retries``)."""

    def __init__(self, error: ApiError) -> None:
        super().__init__(error.message)
        self.error = error


class RouterService:
    """Mutable owner of the backends, the picker and the HTTP client session."""

    def __init__(
        self,
        urls: list[str],
        policy: str,
        scrape_interval_s: float,
        seed: int,
        *,
        prefill_urls: Sequence[str] = (),
        decode_urls: Sequence[str] = (),
        pd: PDSettings | None = None,
        discovery: ServiceDiscovery | None = None,
        retries: int = 0,
    ) -> None:
        self.retries = retries
        roles: list[tuple[str, Role]] = [(u, "both") for u in urls]
        roles += [(u, "prefill") for u in prefill_urls] + [(u, "decode") for u in decode_urls]
        self.backends: dict[str, Backend] = {}
        for url, role in roles:
            b = Backend(url, role)
            if b.url in self.backends:
                raise InputError(f"engine {b.url} is given twice", expected="each URL once")
            self.backends[b.url] = b
        self.static = frozenset(self.backends)
        self.discovery = discovery
        self._discovered: dict[str, frozenset[str]] = {}  # Service key -> its engines
        self.picker = Picker(policy, seed, pd)
        self.scrape_interval_s = scrape_interval_s
        self.registry = CollectorRegistry(auto_describe=False)
        self.metrics = RouterMetrics(self.registry)
        self.http = HttpMetrics(self.registry)
        self.session: aiohttp.ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._seq = 0
        self._rng = random.Random(seed)  # X-Request-Id suffixes (the hops share one)
        self._origin = time.monotonic()
        self._pending: set[asyncio.Task[None]] = set()

    # -- scraping -----------------------------------------------------------------------------
    async def _scrape(self, b: Backend) -> None:
        assert self.session is not None
        timeout = aiohttp.ClientTimeout(total=max(1.0, 4 * self.scrape_interval_s))
        try:
            async with self.session.get(b.url + "/health", timeout=timeout) as resp:
                ready = resp.status == 200
            if ready:
                async with self.session.get(b.url + "/metrics", timeout=timeout) as resp:
                    b.load = parse_load(await resp.text())
                if b.max_model_len is None:
                    async with self.session.get(b.url + "/v1/models", timeout=timeout) as resp:
                        if resp.status == 200:
                            b.max_model_len = parse_max_model_len(await resp.json())
        except (aiohttp.ClientError, TimeoutError, ValueError):
            ready = False
        b.ready = ready
        self.metrics.ready.labels(b.url).set(1.0 if ready else 0.0)

    async def scrape_all(self) -> None:
        await asyncio.gather(*(self._scrape(b) for b in list(self.backends.values())))

    def sync_service(self, ref: ServiceRef, urls: Sequence[str]) -> None:
        """The engines behind ``ref`` are now ``urls``: new ones join (not ready until their
        first scrape, started now), gone ones leave (their requests in flight finish). An
        engine also given by URL or by another Service stays."""
        fresh = frozenset(u.rstrip("/") for u in urls)
        old = self._discovered.get(ref.key, frozenset())
        self._discovered[ref.key] = fresh
        others = set(self.static).union(*(v for k, v in self._discovered.items() if k != ref.key))
        for url in sorted(old - fresh - others):
            self.backends.pop(url, None)
            with contextlib.suppress(KeyError):
                self.metrics.ready.remove(url)
        for url in sorted(fresh - set(self.backends)):
            b = self.backends[url] = Backend(url, ref.role)
            if self.session is not None:
                task = asyncio.get_running_loop().create_task(self._scrape(b))
                self._pending.add(task)
                task.add_done_callback(self._pending.discard)

    async def _scrape_loop(self) -> None:
        while True:
            await self.scrape_all()
            await asyncio.sleep(self.scrape_interval_s)

    # -- handlers -----------------------------------------------------------------------------
    async def health(self, request: web.Request) -> web.Response:
        ready = any(b.ready for b in self.backends.values())
        return web.Response(status=200 if ready else 503)

    async def models(self, request: web.Request) -> web.Response:
        assert self.session is not None
        for b in self.backends.values():
            if b.ready:
                async with self.session.get(b.url + "/v1/models") as resp:
                    return web.json_response(await resp.json(), status=resp.status)
        return error_response(ApiError(503, "no ready engine"))

    async def metrics_page(self, request: web.Request) -> web.Response:
        data = generate_latest(self.registry)
        return web.Response(body=data, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def completions(self, request: web.Request) -> web.StreamResponse:
        return await self._route(request, "completion", "/v1/completions")

    async def chat(self, request: web.Request) -> web.StreamResponse:
        return await self._route(request, "chat", "/v1/chat/completions")

    def _routing_request(
        self, raw: bytes, kind: CallKind
    ) -> tuple[str, Request, dict[str, object]]:
        try:
            body = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ApiError(400, f"the request body is not JSON: {exc}") from None
        call = read_call(kind, body)
        tokens = [str(t) for t in call.prompt_ids] if call.prompt_ids else text_tokens(call.prompt)
        self._seq += 1
        req = Request(
            RequestId(f"route-{self._seq}"),
            time.monotonic() - self._origin,
            len(tokens),
            call.max_tokens or 1,
            segments_of(tokens),
            session_id=call.session,
            max_tokens=call.max_tokens,
        )
        return call.model, req, body

    async def _route(self, request: web.Request, kind: CallKind, path: str) -> web.StreamResponse:
        raw = await request.read()
        try:
            model, req, body = self._routing_request(raw, kind)
            self.metrics.incoming.labels(model).inc()
            route = self.picker.pick_pd(req, list(self.backends.values()), req.arrival_s)
            if route.engine is None:
                raise self._refused(model, req, route)
            request_id = f"{req.request_id}-{uuid.UUID(int=self._rng.getrandbits(128))}"
            if route.prefill is not None:
                answer = await self._prefill(route.prefill, path, body, request_id)
                if answer.decode_body is None:
                    return web.json_response(answer.error, status=answer.status)
                raw = json.dumps(answer.decode_body).encode()
        except ApiError as err:
            return error_response(err)
        engine, tried = route.engine, {route.engine.url}
        while True:
            try:
                return await self._forward(request, engine, path, raw, request_id)
            except _Unsent as failed:
                retry = self._retry_target(req, tried) if len(tried) <= self.retries else None
                if retry is None:
                    return error_response(failed.error)
                self.metrics.retries.labels(engine.url).inc()
                engine = retry
                tried.add(engine.url)

    def _refused(self, model: str, req: Request, route: LiveRoute) -> ApiError:
        """No engine takes the request: vLLM's 400 when the prompt is longer than every ready
        engine's context (what each engine would answer), else 503."""
        if route.refusal is Refusal.PROMPT_TOO_LONG:
            self.metrics.too_long.inc()
            limit = route.decision.max_model_len
            return context_too_long(limit, req.prompt_tokens, req.max_tokens or 0)
        self.metrics.no_engine.inc()
        return ApiError(503, f"No ready engine for model `{model}`: {route.reason}.")

    def _retry_target(self, req: Request, tried: set[str]) -> Backend | None:
        """Another engine for a request whose engine failed before answering: the policy's
        pick among the ready engines not tried yet that serve whole requests or decode (the
        prefill, if there was one, is done: its ``kv_transfer_params`` go along)."""
        left = [b for b in self.backends.values() if b.url not in tried and b.role != "prefill"]
        return self.picker.pick_pd(req, left, time.monotonic() - self._origin).engine

    async def _prefill(
        self, b: Backend, path: str, body: dict[str, object], request_id: str
    ) -> PrefillAnswer:
        """The prefill hop (``prefill_hop``); counted as a request routed to ``b``."""
        assert self.session is not None
        self.metrics.disaggregated.inc()
        b.outstanding += 1
        b.num_routed += 1
        self.metrics.routed.labels(b.url).inc()
        start = time.perf_counter()
        try:
            answer = await run_prefill(self.session, b.url + path, body, request_id)
        except ApiError:
            self.metrics.prefill_failures.labels(b.url).inc()
            raise
        finally:
            b.outstanding -= 1
            self.metrics.prefill.labels(b.url).observe(time.perf_counter() - start)
        if answer.decode_body is None:
            self.metrics.prefill_failures.labels(b.url).inc()
        return answer

    async def _forward(
        self, request: web.Request, b: Backend, path: str, raw: bytes, request_id: str
    ) -> web.StreamResponse:
        assert self.session is not None
        b.outstanding += 1
        b.num_routed += 1
        self.metrics.routed.labels(b.url).inc()
        start = time.perf_counter()
        resp: web.StreamResponse | None = None
        try:
            headers = {"Content-Type": "application/json", "X-Request-Id": request_id}
            async with self.session.post(b.url + path, data=raw, headers=headers) as up:
                resp = web.StreamResponse(
                    status=up.status,
                    headers={"Content-Type": up.headers.get("Content-Type", "application/json")},
                )
                await resp.prepare(request)
                first = True
                async for data in up.content.iter_any():
                    if first:
                        self.metrics.ttfb.labels(b.url).observe(time.perf_counter() - start)
                        first = False
                    await resp.write(data)
                await resp.write_eof()
                return resp
        except (aiohttp.ClientError, TimeoutError) as exc:
            if resp is not None:
                return resp  # the status is sent: the client sees the stream end early
            raise _Unsent(ApiError(502, f"engine {b.url} failed: {exc}")) from None
        finally:
            b.outstanding -= 1
            self.metrics.duration.labels(b.url).observe(time.perf_counter() - start)

    # -- lifecycle ----------------------------------------------------------------------------
    async def on_startup(self, app: web.Application) -> None:
        # No total timeout: a long generation streams for as long as it takes.
        self.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None))
        if self.discovery is not None:
            self.discovery.start(asyncio.get_running_loop(), self.sync_service)
        await self.scrape_all()
        self._task = asyncio.get_running_loop().create_task(self._scrape_loop())

    async def on_cleanup(self, app: web.Application) -> None:
        if self.discovery is not None:
            self.discovery.stop()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.session is not None:
            await self.session.close()


ROUTER = web.AppKey("router", RouterService)


def make_router_app(
    urls: list[str],
    policy: str,
    scrape_interval_s: float = 0.05,
    seed: int = 0,
    *,
    prefill_urls: Sequence[str] = (),
    decode_urls: Sequence[str] = (),
    pd: PDSettings | None = None,
    discovery: ServiceDiscovery | None = None,
    retries: int = 0,
) -> web.Application:
    service = RouterService(
        urls,
        policy,
        scrape_interval_s,
        seed,
        prefill_urls=prefill_urls,
        decode_urls=decode_urls,
        pd=pd,
        discovery=discovery,
        retries=retries,
    )
    app = web.Application(middlewares=[service.http.middleware])
    app[ROUTER] = service
    app.router.add_get("/health", service.health)
    app.router.add_get("/v1/models", service.models)
    app.router.add_get("/metrics", service.metrics_page)
    app.router.add_post("/v1/completions", service.completions)
    app.router.add_post("/v1/chat/completions", service.chat)
    app.on_startup.append(service.on_startup)
    app.on_cleanup.append(service.on_cleanup)
    return app
