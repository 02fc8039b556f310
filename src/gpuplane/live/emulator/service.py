"""The emulator's HTTP service (aiohttp): vLLM's OpenAI routes, ``/health`` and ``/metrics``.

``POST /v1/completions`` and ``/v1/chat/completions`` (JSON, or SSE with ``stream: true``),
``GET /v1/models``, ``GET /health`` (503 while the weights load, then 200; vLLM's server does not
listen at all before then, so a readiness probe sees the same "not ready"), ``GET /metrics``
(the engine's vLLM or SGLang families and the HTTP families). Errors are vLLM's bodies.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator

import aiohttp
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from gpuplane.live.emulator.clock import ScaledClock
from gpuplane.live.emulator.kv_params import NONE, read_kv_params
from gpuplane.live.emulator.nixl import READ_PATH, KvLoadFailed, NixlConnector
from gpuplane.live.emulator.nixl_metrics import NixlMetrics
from gpuplane.live.emulator.runtime import EngineRuntime, Stream, emitted
from gpuplane.live.emulator.settings import EmulatorSettings
from gpuplane.live.openai import shapes
from gpuplane.live.openai.calls import Call, CallKind, read_call
from gpuplane.live.openai.error_response import error_response
from gpuplane.live.openai.errors import ApiError, context_too_long, model_not_found
from gpuplane.live.openai.http_metrics import HttpMetrics
from gpuplane.live.openai.text import OutputWords, segments_of, text_tokens
from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.metrics.exposition import EngineCollector
from gpuplane.serving.models.catalog import resolve_model
from gpuplane.serving.request import FinishReason, Request, RequestId

RUNTIME = web.AppKey("runtime", EngineRuntime)
# The emulated time (seconds on the engine's clock) at which the engine queued the request (its
# arrival, or later when a step boundary had passed it or its KV was read first): what a
# client needs to replay the same arrivals through the twin (bench/emulator.py does).
ARRIVAL_HEADER = "X-Gpuplane-Arrival-S"
# The engine clock's origin on this host's ``time.monotonic`` (emulated t is at wall
# ``origin + t / time_scale``): a client on the same host can place token times on that clock.
ORIGIN_HEADER = "X-Gpuplane-Clock-Origin"


def _local(request: web.Request) -> tuple[str, int]:
    """The address this connection reached the server on (what a peer can reach it at)."""
    sock = request.transport.get_extra_info("sockname") if request.transport else None
    if isinstance(sock, tuple) and len(sock) >= 2:
        return str(sock[0]), int(sock[1])
    return request.url.host or "127.0.0.1", request.url.port or 80


class EmulatorService:
    """The handlers over one :class:`EngineRuntime` (mutable: its task)."""

    def __init__(
        self, settings: EmulatorSettings, engine: Engine, load_s: float, precise_wake: bool
    ) -> None:
        self.settings = settings
        self.model = settings.spec.served_model_name
        clock = ScaledClock(settings.time_scale)
        self.runtime = EngineRuntime(engine, clock, load_s, precise_wake=precise_wake)
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(EngineCollector(lambda: [(engine, {})]))
        self.http = HttpMetrics(self.registry)
        self.nixl: NixlConnector | None = None
        if settings.kv_transfer is not None:
            self.nixl = NixlConnector(
                settings.kv_transfer,
                engine,
                resolve_model(settings.spec.model),
                settings.spec.tensor_parallel_size,
                settings.kv_link_for,
                self.runtime.clock,
                NixlMetrics(self.registry, self.model),
                self.runtime.release_held,
                settings.kv_hold_timeout_s,
            )
            self.runtime.on_finished.append(self.nixl.finished)
            if settings.kv_transfer.kv_role != "kv_producer":
                self.nixl.metrics.track_fetch_stages(self.nixl.fetch_stages)
        self._task: asyncio.Task[None] | None = None

    # -- probes and metrics -----------------------------------------------------------------
    async def health(self, request: web.Request) -> web.Response:
        if self.runtime.ready:
            return web.Response(status=200)
        return web.Response(status=503, text="loading model weights")

    async def models(self, request: web.Request) -> web.Response:
        cfg = self.runtime.engine.config
        card = {
            "id": self.model,
            "object": "model",
            "created": int(time.time()),
            "owned_by": self.settings.spec.kind,
            "root": self.settings.spec.model,
            "parent": None,
            "max_model_len": cfg.max_model_len,
        }
        return web.json_response({"object": "list", "data": [card]})

    async def metrics(self, request: web.Request) -> web.Response:
        self.runtime.poll()
        if self.nixl is not None:
            self.nixl.expire()
        return web.Response(
            body=generate_latest(self.registry), headers={"Content-Type": CONTENT_TYPE_LATEST}
        )

    # -- generation -------------------------------------------------------------------------
    async def completions(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, "completion")

    async def chat(self, request: web.Request) -> web.StreamResponse:
        return await self._generate(request, "chat")

    async def _generate(self, request: web.Request, kind: CallKind) -> web.StreamResponse:
        # The request arrives when its handler starts, before its body is read and counted: the
        # emulated engine sees it then, as the twin sees a request at its arrival time.
        arrival_s = self.runtime.clock.now_s()
        streaming = False
        try:
            if not self.runtime.ready:
                raise ApiError(503, "The model is loading; the server is not ready yet.")
            try:
                body = await request.json()
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise ApiError(400, f"the request body is not JSON: {exc}") from None
            call = read_call(kind, body)
            if call.model != self.model:
                raise model_not_found(call.model)
            kv = read_kv_params(body) if self.nixl is not None else NONE
            req, words = self._request(call, arrival_s)
            streaming = call.stream
            external = 0
            queued_s = arrival_s
            if kv.remote_prefill and self.nixl is not None:
                try:
                    external = (await self.nixl.pull(kv, req)).external_tokens
                except KvLoadFailed:
                    self.runtime.fail(req, arrival_s)  # vLLM: FINISHED_ERROR, reason "error"
                    raise
                # The decode engine schedules the request once its KV has been read (the read's
                # time stays in the request's TTFT through its arrival time).
                queued_s = self.runtime.clock.now_s()
        except ApiError as err:
            if streaming:  # accepted, then failed (a KV read): vLLM streams the error
                return await self._sse_error(request, err)
            return error_response(err)
        if kv.remote_decode and self.nixl is not None:
            self.nixl.hold_on_finish(req.request_id)
        stream = self.runtime.submit(req, external, at=queued_s)
        if external and self.nixl is not None:
            self.nixl.landed(stream.live)
        rid = ("cmpl-" if kind == "completion" else "chatcmpl-") + req.request_id
        arrival = {
            ARRIVAL_HEADER: f"{stream.live.queued_s:.9f}",
            ORIGIN_HEADER: f"{self.runtime.clock.origin:.9f}",
        }
        if call.stream:
            return await self._sse(request, call, rid, stream, words, arrival)
        async for _ in emitted(stream):
            pass
        rec = stream.record
        assert rec is not None
        use = shapes.usage(rec.prompt_tokens, rec.output_tokens, rec.cached_tokens)
        text = words.next_words(rec.output_tokens)
        created = int(time.time())
        out = shapes.response(kind, rid, created, self.model, text, str(rec.finish_reason), use)
        if kv.remote_decode and self.nixl is not None:
            capped = rec.finish_reason is FinishReason.LENGTH
            params = self.nixl.finished_prefill(req.request_id, capped, _local(request))
            out["kv_transfer_params"] = params
        return web.json_response(out, headers=arrival)

    async def nixl_read(self, request: web.Request) -> web.Response:
        """NIXL's READ and notification of held KV blocks (emulated over HTTP)."""
        assert self.nixl is not None
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = None
        status, out = self.nixl.read(body)
        return web.json_response(out, status=status)

    async def _sse_error(self, request: web.Request, err: ApiError) -> web.StreamResponse:
        resp = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await resp.prepare(request)
        with contextlib.suppress(ConnectionResetError):
            await resp.write(shapes.sse(err.body()) + shapes.DONE)
            await resp.write_eof()
        return resp

    def _request(self, call: Call, arrival_s: float) -> tuple[Request, OutputWords]:
        tokens = [str(t) for t in call.prompt_ids] if call.prompt_ids else text_tokens(call.prompt)
        cfg = self.runtime.engine.config
        limit = cfg.max_model_len
        asked = call.max_tokens or 0
        if len(tokens) + max(asked, 1) > limit:
            raise context_too_long(limit, len(tokens), asked)
        seed = call.seed if call.seed is not None else self.settings.seed
        words = OutputWords(seed, call.prompt)
        natural = max(words.natural_length(self.settings.mean_output_tokens), call.min_tokens, 1)
        if call.ignore_eos:
            natural = call.max_tokens or limit - len(tokens)
        req = Request(
            RequestId(self.runtime.next_id("req")),
            arrival_s,
            len(tokens),
            natural,
            segments_of(tokens, self.runtime.engine.block_size),
            session_id=call.session,
            max_tokens=call.max_tokens,
        )
        return req, words

    async def _sse(
        self,
        request: web.Request,
        call: Call,
        rid: str,
        stream: Stream,
        words: OutputWords,
        extra: dict[str, str],
    ) -> web.StreamResponse:
        resp = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", **extra}
        )
        await resp.prepare(request)
        with contextlib.suppress(ConnectionResetError):
            async for data in self._chunks(call, rid, stream, words):
                await resp.write(data)
            await resp.write_eof()
        return resp

    async def _chunks(
        self, call: Call, rid: str, stream: Stream, words: OutputWords
    ) -> AsyncIterator[bytes]:
        """One chunk per token (vLLM sends one per engine output, a token per step)."""
        kind, created, model = call.kind, int(time.time()), self.model
        sent = 0
        async for n in emitted(stream):
            parts: list[bytes] = []
            if sent == 0 and kind == "chat":
                parts.append(shapes.sse(shapes.chunk(kind, rid, created, model, "", first=True)))
            for i in range(sent, n):
                rec = stream.record
                last = rec is not None and i == rec.output_tokens - 1
                reason = str(rec.finish_reason) if last and rec is not None else None
                text = words.next_words(1)
                parts.append(shapes.sse(shapes.chunk(kind, rid, created, model, text, reason)))
            sent = n
            yield b"".join(parts)
        rec = stream.record
        assert rec is not None
        if call.include_usage:
            use = shapes.usage(rec.prompt_tokens, rec.output_tokens, rec.cached_tokens)
            yield shapes.sse(shapes.usage_chunk(kind, rid, created, model, use))
        yield shapes.DONE

    # -- lifecycle --------------------------------------------------------------------------
    async def on_startup(self, app: web.Application) -> None:
        if self.nixl is not None:
            self.nixl.session = aiohttp.ClientSession()
        self._task = asyncio.get_running_loop().create_task(self.runtime.run())

    async def on_cleanup(self, app: web.Application) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.nixl is not None and self.nixl.session is not None:
            await self.nixl.session.close()


def make_app(
    settings: EmulatorSettings, engine: Engine, load_s: float, *, precise_wake: bool = False
) -> web.Application:
    """The emulator's app; ``precise_wake`` (``EngineRuntime``) only where it owns the loop."""
    service = EmulatorService(settings, engine, load_s, precise_wake)
    app = web.Application(middlewares=[service.http.middleware])
    app[RUNTIME] = service.runtime
    app.router.add_get("/health", service.health)
    app.router.add_get("/v1/models", service.models)
    app.router.add_get("/metrics", service.metrics)
    app.router.add_post("/v1/completions", service.completions)
    app.router.add_post("/v1/chat/completions", service.chat)
    if service.nixl is not None:
        app.router.add_post(READ_PATH, service.nixl_read)
    app.on_startup.append(service.on_startup)
    app.on_cleanup.append(service.on_cleanup)
    return app
