"""Run an aiohttp application until SIGTERM/SIGINT (or ``stop``), as the services do (the
engine emulator, the router, the MIG controller's endpoints), with an optional background loop
that runs while the app serves."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from aiohttp import web


async def serve_app(
    app: web.Application,
    host: str,
    port: int,
    *,
    stop: asyncio.Event | None = None,
    on_listening: Callable[[int], None] | None = None,
    background: Callable[[asyncio.Event], Awaitable[None]] | None = None,
) -> None:
    """Listen on ``host:port`` (0: any free port, reported to ``on_listening``) until stopped."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        # Not available off the main thread (a test running the service in one).
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    if on_listening is not None:
        addresses = runner.addresses
        on_listening(int(addresses[0][1]) if addresses else port)
    try:
        await (background(stop) if background is not None else stop.wait())
    finally:
        await runner.cleanup()


@asynccontextmanager
async def serving(app: web.Application) -> AsyncIterator[str]:
    """The app listening on a free loopback port for the block: its base URL (the demo and the
    tests run services in-process this way)."""
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


@asynccontextmanager
async def bound(app: web.Application, host: str, port: int) -> AsyncIterator[int]:
    """The app listening on ``host:port`` for the block (0: any free port): the bound port (a
    service's second endpoint, e.g. the engine emulator's DCGM exporter)."""
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        addresses = runner.addresses
        yield int(addresses[0][1]) if addresses else port
    finally:
        await runner.cleanup()
