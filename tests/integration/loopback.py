"""Start an aiohttp app on a free loopback port: the fake servers' one way to listen."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod

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


class QueryApi(ABC):
    """What the fake Prometheus servers share: their ``_query`` handler served at
    Prometheus's ``/api/v1/query`` on a free loopback port (a mixin for their dataclasses)."""

    runner: web.AppRunner | None
    port: int

    @abstractmethod
    async def _query(self, request: web.Request) -> web.Response:
        """Prometheus's instant-query answer for ``request``."""

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/api/v1/query", self._query)
        self.runner = web.AppRunner(app)
        self.port = await listen(self.runner)

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()
