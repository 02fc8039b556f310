"""Running the scaler: the gRPC server (the external scaler and the standard health service)
and the ``/metrics`` + ``/healthz`` HTTP endpoint, until SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import signal
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from aiohttp import web
from grpc import aio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio

from gpuplane.core.errors import InputError
from gpuplane.live.scaler.engine import ScalerEngine
from gpuplane.live.scaler.grpc_service import SERVICE, ExternalScalerService, StreamSettings
from gpuplane.live.scaler.service_metrics import CONTENT_TYPE, ScalerMetrics


@dataclass(frozen=True, slots=True)
class ServerOptions:
    listen: str = "127.0.0.1:9090"
    metrics_listen: str | None = "127.0.0.1:9091"
    tls_cert: Path | None = None
    tls_key: Path | None = None
    stream: StreamSettings = field(default_factory=StreamSettings)


def _credentials(options: ServerOptions) -> grpc.ServerCredentials | None:
    if (options.tls_cert is None) != (options.tls_key is None):
        raise InputError("give both --tls-cert and --tls-key, or neither")
    if options.tls_cert is None or options.tls_key is None:
        return None
    try:
        pair = (options.tls_key.read_bytes(), options.tls_cert.read_bytes())
    except OSError as err:
        raise InputError(f"cannot read the TLS key pair: {err}") from None
    return grpc.ssl_server_credentials([pair])


def _host_port(text: str, what: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise InputError(f"{what} {text!r}: expected host:port, such as 127.0.0.1:9090")
    return host.strip("[]") or "0.0.0.0", int(port)


@dataclass(slots=True)
class RunningScaler:
    server: aio.Server
    port: int
    service: ExternalScalerService
    health: health_aio.HealthServicer | None = None
    runner: web.AppRunner | None = None
    metrics_port: int | None = None

    async def stop(self, grace_s: float = 1.0) -> None:
        if self.health is not None:
            await self.health.enter_graceful_shutdown()
        await self.server.stop(grace_s)
        if self.runner is not None:
            await self.runner.cleanup()
        await self.service.engine.close()


async def _metrics_site(metrics: ScalerMetrics, listen: str) -> tuple[web.AppRunner, int]:
    async def exposition(_: web.Request) -> web.Response:
        return web.Response(body=metrics.exposition(), headers={"Content-Type": CONTENT_TYPE})

    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    app = web.Application()
    app.router.add_get("/metrics", exposition)
    app.router.add_get("/healthz", healthz)
    runner = web.AppRunner(app)
    await runner.setup()
    host, port = _host_port(listen, "--metrics-listen")
    site = web.TCPSite(runner, host, port)
    await site.start()
    server = site._server  # aiohttp keeps the listening server here; port 0 picks one
    if isinstance(server, asyncio.Server) and server.sockets:
        port = server.sockets[0].getsockname()[1]
    return runner, port


async def start(options: ServerOptions, engine: ScalerEngine | None = None) -> RunningScaler:
    """Start serving; ``listen`` with port 0 picks a free port (``RunningScaler.port``)."""
    _host_port(options.listen, "--listen")
    credentials = _credentials(options)
    metrics = ScalerMetrics()
    service = ExternalScalerService(engine or ScalerEngine(), metrics, options.stream)
    server = aio.server()
    server.add_generic_rpc_handlers((service.handler(),))
    health = health_aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    if credentials is None:
        port = server.add_insecure_port(options.listen)
    else:
        port = server.add_secure_port(options.listen, credentials)
    if port == 0:
        raise InputError(f"cannot listen on {options.listen}")
    await server.start()
    for name in ("", SERVICE):
        await health.set(name, health_pb2.HealthCheckResponse.SERVING)
    running = RunningScaler(server, port, service, health)
    if options.metrics_listen:
        running.runner, running.metrics_port = await _metrics_site(metrics, options.metrics_listen)
    return running


async def serve(options: ServerOptions) -> None:
    """Serve until SIGTERM (Kubernetes stopping the pod) or SIGINT, then stop gracefully: the
    health service answers NOT_SERVING and in-flight calls get a second to finish."""
    running = await start(options)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await running.stop()
