"""``gpuplane serve router``: an OpenAI-compatible proxy in front of engines, routing with the
twin's routers (docs/live.md, "Router")."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Annotated

import typer

from gpuplane.k8s.aiohttp_serve import serve_app
from gpuplane.k8s.router.service import make_router_app
from gpuplane.serving.routing.registry import ROUTER_NAMES, make_router


def router_command(
    engine: Annotated[
        list[str], typer.Option("--engine", help="An engine's base URL (repeat for each).")
    ],
    policy: Annotated[
        str, typer.Option("--policy", help=f"One of: {', '.join(ROUTER_NAMES)}.")
    ] = "llm-d",
    host: Annotated[str, typer.Option("--host")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="0: any free port (logged).")] = 8080,
    scrape_interval: Annotated[
        float, typer.Option("--scrape-interval", min=0.001, help="Seconds between scrapes.")
    ] = 0.05,
    seed: Annotated[int, typer.Option("--seed", help="Seeds the tie-break draws.")] = 0,
) -> None:
    """Route /v1/completions and /v1/chat/completions to the engines."""
    make_router(policy)  # an unknown name fails here, with the valid ones
    app = make_router_app(engine, policy, scrape_interval, seed)

    def report(bound: int) -> None:
        line = {"msg": "listening", "host": host, "port": bound, "policy": policy}
        sys.stderr.write(json.dumps({**line, "engines": engine}) + "\n")
        sys.stderr.flush()

    asyncio.run(serve_app(app, host, port, on_listening=report))
