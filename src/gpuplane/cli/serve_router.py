"""``gpuplane serve router``: an OpenAI-compatible proxy in front of engines, routing with the
twin's routers (docs/live.md, "Router")."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Annotated

import typer

from gpuplane.core.errors import InputError
from gpuplane.k8s.aiohttp_serve import serve_app
from gpuplane.k8s.router.service import make_router_app
from gpuplane.serving.routing.pd import PDSettings
from gpuplane.serving.routing.registry import ROUTER_NAMES, make_router


def router_command(
    engine: Annotated[
        list[str] | None,
        typer.Option("--engine", help="A whole-request engine's base URL (repeat for each)."),
    ] = None,
    prefill_engine: Annotated[
        list[str] | None,
        typer.Option("--prefill-engine", help="P/D: a prefill engine's base URL (repeatable)."),
    ] = None,
    decode_engine: Annotated[
        list[str] | None,
        typer.Option("--decode-engine", help="P/D: a decode engine's base URL (repeatable)."),
    ] = None,
    pd_threshold: Annotated[
        int,
        typer.Option(
            "--pd-threshold",
            min=0,
            help="P/D: split when this many prompt tokens are not cached on the decode engine.",
        ),
    ] = PDSettings().non_cached_tokens,
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
    whole, prefill, decode = engine or [], prefill_engine or [], decode_engine or []
    if not whole and not decode:
        raise InputError(
            "no engine to serve requests", expected="--engine URL or --decode-engine URL"
        )
    for url in (*whole, *prefill, *decode):
        if not url.startswith(("http://", "https://")):
            raise InputError(f"engine URL {url!r}", expected="http://host:port")
    app = make_router_app(
        whole,
        policy,
        scrape_interval,
        seed,
        prefill_urls=prefill,
        decode_urls=decode,
        pd=PDSettings(non_cached_tokens=pd_threshold),
    )
    engines = {"engines": whole, "prefill_engines": prefill, "decode_engines": decode}

    def report(bound: int) -> None:
        line = {"msg": "listening", "host": host, "port": bound, "policy": policy}
        sys.stderr.write(json.dumps({**line, **engines}) + "\n")
        sys.stderr.flush()

    asyncio.run(serve_app(app, host, port, on_listening=report))
