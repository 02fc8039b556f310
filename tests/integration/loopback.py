"""Start an aiohttp app on a free loopback port: the fake servers' one way to listen."""

from __future__ import annotations

import asyncio

from aiohttp import web


async def listen(runner: web.AppRunner) -> int:
    """Set ``runner`` up on 127.0.0.1 with a port the kernel picks, and return that port."""
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    server = site._server
    assert isinstance(server, asyncio.Server)
    port: int = server.sockets[0].getsockname()[1]
    return port
