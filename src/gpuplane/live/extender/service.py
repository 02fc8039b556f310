"""The extender's HTTP service (aiohttp): ``POST <prefix>/<verb>`` for the four verbs, and
``/healthz``, ``/readyz``, ``/metrics``.

- Decisions run on one worker thread (the state is not thread-safe, and one worker keeps
  answers in arrival order); the event loop only reads bodies and writes answers.
- Each call has a deadline below kube-scheduler's 5 s default httpTimeout: past it the call is
  answered with the protocol's error form (the worker finishes the decision in the background).
- Bodies over ``max_body_bytes`` are refused with a message naming the limit.
- The cluster is loaded by ``loader`` in the background (``/readyz`` answers 503 until the first
  load), then again every ``relist_s`` seconds when set; a failed relist keeps the last view.
- Or it follows a ``feed`` (the informers, ``live_feed``): the feed's threads call back on each
  change (``call_soon_threadsafe`` sets an asyncio event, nothing else crosses threads), and one
  task builds fit's values in the default executor, at most one build at a time and after a
  short batching pause (a burst of events is one build), then loads them on the worker, between
  two calls. ``/readyz`` answers 503 until every resource has been listed once.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from gpuplane.fit.model import FitCluster
from gpuplane.live.extender.binder import Binder
from gpuplane.live.extender.handlers import VERBS, Reply, error_reply, handle
from gpuplane.live.extender.live_feed import Feed
from gpuplane.live.extender.metrics import ExtenderMetrics, make_metrics
from gpuplane.live.extender.state import ExtenderState
from gpuplane.live.extender.wire import encode

log = logging.getLogger("gpuplane.extender")
MAX_BODY_BYTES = 64 * 2**20  # a 10,000-node NodeList is about 40 MiB
DEADLINE_S = 4.0
JSON = "application/json"
BATCH_S = 0.02  # after a change, wait this long for the rest of a burst before building
SETTLE_EVERY_S = 60.0  # collect and freeze the heap after a build at most this often


@dataclass(frozen=True, slots=True)
class ServeConfig:
    url_prefix: str = "/gpuplane"
    max_body_bytes: int = MAX_BODY_BYTES
    deadline_s: float = DEADLINE_S
    relist_s: float | None = None


# Reads the cluster: fit's values and the resourceVersion of each Node object read.
def settle_heap() -> None:
    """After a cluster load: collect, then move what is left out of the collector's sight
    (``gc.freeze``), so a full collection in the middle of a call does not walk the whole
    view (hundreds of milliseconds at 5,000 nodes)."""
    gc.collect()
    gc.freeze()


Loader = Callable[[], tuple[FitCluster, Mapping[str, str]]]
STATE = web.AppKey("state", ExtenderState)
METRICS = web.AppKey("metrics", ExtenderMetrics)


class _Service:
    def __init__(
        self,
        state: ExtenderState,
        metrics: ExtenderMetrics,
        config: ServeConfig,
        loader: Loader | None,
        binder: Binder | None,
        feed: Feed | None = None,
    ) -> None:
        self.state, self.metrics, self.config = state, metrics, config
        self.loader, self.binder, self.feed = loader, binder, feed
        self.settled_at: float | None = None
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="extender")
        self.loads: asyncio.Task[None] | None = None

    async def verb(self, request: web.Request) -> web.Response:
        verb = request.match_info["verb"]
        started = time.monotonic()
        if verb not in VERBS:
            reply = Reply(404, {"Error": f"unknown verb {verb!r}; use one of {', '.join(VERBS)}"})
        else:
            reply = await self._answer(verb, request)
        elapsed = time.monotonic() - started
        self._record(verb if verb in VERBS else "unknown", reply, elapsed)
        body = reply.body if isinstance(reply.body, bytes) else encode(reply.body)
        return web.Response(body=body, status=reply.status, content_type=JSON)

    async def _answer(self, verb: str, request: web.Request) -> Reply:
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            limit = self.config.max_body_bytes
            return error_reply(
                verb, 413, "too-large", f"request body over {limit} bytes (--max-body-mib)"
            )
        loop = asyncio.get_running_loop()
        now = time.monotonic()
        job = loop.run_in_executor(self.worker, handle, self.state, verb, body, now, self.binder)
        try:
            return await asyncio.wait_for(asyncio.shield(job), self.config.deadline_s)
        except TimeoutError:
            text = f"no answer within the extender's {self.config.deadline_s:g} s deadline"
            return error_reply(verb, 504, "deadline", text)

    def _record(self, verb: str, reply: Reply, elapsed: float) -> None:
        m = self.metrics
        m.requests.labels(verb, str(reply.status)).inc()
        m.latency.labels(verb).observe(elapsed)
        m.assumed.set(len(self.state.assumed))
        extra = {"verb": verb, "code": reply.status, "ms": round(elapsed * 1000, 3)}
        if reply.error:
            m.errors.labels(verb, reply.error).inc()
            log.warning(reply.detail, extra={**extra, "kind": reply.error})
        else:
            log.info(reply.detail or verb, extra=extra)

    async def healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def readyz(self, request: web.Request) -> web.Response:
        if self.state.ready:
            return web.Response(text=f"ok: {self.state.num_nodes} nodes")
        return web.Response(status=503, text="not ready: the cluster is not read yet")

    async def metrics_page(self, request: web.Request) -> web.Response:
        data = generate_latest(self.metrics.registry)
        return web.Response(body=data, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def _load_once(self) -> None:
        assert self.loader is not None
        loop = asyncio.get_running_loop()
        started = time.monotonic()
        try:
            cluster, versions = await loop.run_in_executor(None, self.loader)
        except Exception:
            self.metrics.loads.labels("error").inc()
            log.exception("reading the cluster failed; keeping the last view")
            return
        await loop.run_in_executor(self.worker, self.state.load, cluster, versions)
        settle_heap()
        self.metrics.loads.labels("ok").inc()
        self.metrics.nodes.set(len(cluster.nodes))
        ms = round((time.monotonic() - started) * 1000, 1)
        log.info("cluster read", extra={"nodes": len(cluster.nodes), "ms": ms})

    async def _loads(self) -> None:
        await self._load_once()
        while self.config.relist_s:
            await asyncio.sleep(self.config.relist_s)
            await self._load_once()

    async def _follow(self, feed: Feed) -> None:
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed: the service stops
                loop.call_soon_threadsafe(changed.set)

        feed.subscribe(wake)
        feed.start()
        while True:
            await changed.wait()
            await asyncio.sleep(BATCH_S)
            changed.clear()
            if feed.ready:
                await self._build(feed)

    async def _build(self, feed: Feed) -> None:
        loop = asyncio.get_running_loop()
        started = time.monotonic()
        try:
            _, cluster, versions = await loop.run_in_executor(None, feed.read)
        except Exception:
            self.metrics.loads.labels("error").inc()
            log.exception("building the cluster from the informers failed; keeping the last view")
            return
        await loop.run_in_executor(self.worker, self.state.load, cluster, versions)
        now = time.monotonic()
        if self.settled_at is None or now - self.settled_at > SETTLE_EVERY_S:
            settle_heap()
            self.settled_at = now
        self.metrics.loads.labels("ok").inc()
        self.metrics.nodes.set(len(cluster.nodes))
        ms = round((time.monotonic() - started) * 1000, 1)
        log.debug("cluster updated", extra={"nodes": len(cluster.nodes), "ms": ms})

    async def on_startup(self, app: web.Application) -> None:
        if self.loader is not None:
            self.loads = asyncio.create_task(self._loads())
        elif self.feed is not None:
            self.loads = asyncio.create_task(self._follow(self.feed))

    async def on_cleanup(self, app: web.Application) -> None:
        if self.loads is not None:
            self.loads.cancel()
        if self.feed is not None:
            self.feed.stop()
        self.worker.shutdown(wait=False, cancel_futures=True)


def make_app(
    state: ExtenderState,
    config: ServeConfig,
    *,
    loader: Loader | None = None,
    binder: Binder | None = None,
    metrics: ExtenderMetrics | None = None,
    feed: Feed | None = None,
) -> web.Application:
    service = _Service(state, metrics or make_metrics(), config, loader, binder, feed)
    app = web.Application(client_max_size=config.max_body_bytes)
    app[STATE] = state
    app[METRICS] = service.metrics
    prefix = "/" + config.url_prefix.strip("/") if config.url_prefix.strip("/") else ""
    app.router.add_post(prefix + "/{verb}", service.verb)
    app.router.add_get("/healthz", service.healthz)
    app.router.add_get("/readyz", service.readyz)
    app.router.add_get("/metrics", service.metrics_page)
    app.on_startup.append(service.on_startup)
    app.on_cleanup.append(service.on_cleanup)
    return app
