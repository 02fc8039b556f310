"""The extender's aiohttp app on a loopback port, in a thread of its own, for tests and bench:
``with serving(state, config) as url: ...`` gives ``http://127.0.0.1:PORT``."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from aiohttp import web

from gpuplane.live.extender.binder import Binder
from gpuplane.live.extender.live_feed import Feed
from gpuplane.live.extender.service import Loader, ServeConfig, make_app
from gpuplane.live.extender.state import ExtenderState
from tests.integration.loopback import listen


@contextmanager
def serving(
    state: ExtenderState,
    config: ServeConfig | None = None,
    loader: Loader | None = None,
    feed: Feed | None = None,
    binder: Binder | None = None,
) -> Iterator[str]:
    loop = asyncio.new_event_loop()
    app = make_app(state, config or ServeConfig(), loader=loader, feed=feed, binder=binder)
    runner = web.AppRunner(app, access_log=None)
    port: list[int] = []
    started = threading.Event()

    async def start() -> None:
        port.append(await listen(runner))
        started.set()

    def main() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())
        loop.close()

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    if not started.wait(10):
        raise RuntimeError("the extender did not start")
    try:
        yield f"http://127.0.0.1:{port[0]}"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def post(url: str, body: bytes | str | Any) -> tuple[int, Any]:
    """POST ``body`` (bytes as they are, a str encoded, anything else as JSON) as kube does."""
    data = (
        body
        if isinstance(body, bytes)
        else body.encode()
        if isinstance(body, str)
        else json.dumps(body).encode()
    )
    req = urllib.request.Request(
        url, data=data, method="POST", headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
