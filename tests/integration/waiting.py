"""Waiting for a server or a background thread without assuming how fast the machine is.

A fixed number of polls (``for _ in range(500): ... sleep(0.01)``) is a time limit in disguise,
of a few seconds that an idle machine meets and a busy CI runner or a shared 2-core box does
not. These wait as long as it takes, up to a limit far beyond any normal start (a stuck server
still fails the test), and poll often so a fast machine loses nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

PATIENCE_S = 120.0


def wait_until(
    check: Callable[[], bool], what: str, limit_s: float = PATIENCE_S, poll_s: float = 0.01
) -> None:
    """Return once ``check()`` is true; fail, naming ``what``, after ``limit_s``."""
    deadline = time.monotonic() + limit_s
    while not check():
        assert time.monotonic() < deadline, f"never, in {limit_s:.0f} s: {what}"
        time.sleep(poll_s)


async def await_until(
    check: Callable[[], Awaitable[bool]],
    what: str,
    limit_s: float = PATIENCE_S,
    poll_s: float = 0.01,
) -> None:
    """``wait_until`` for an async ``check``, sleeping on the event loop."""
    deadline = time.monotonic() + limit_s
    while not await check():
        assert time.monotonic() < deadline, f"never, in {limit_s:.0f} s: {what}"
        await asyncio.sleep(poll_s)
