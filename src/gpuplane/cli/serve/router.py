"""``gpuplane serve router``: an OpenAI-compatible proxy in front of engines, routing with the
twin's routers (docs/live.md, "Router")."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from gpuplane.cli.cluster_options import ContextOpt
from gpuplane.core.errors import InputError
from gpuplane.live.http.aiohttp_serve import serve_app
from gpuplane.live.router.discovery import ServiceDiscovery, parse_service_ref
from gpuplane.live.router.service import make_router_app
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
    service: Annotated[
        list[str] | None,
        typer.Option(
            "--service",
            metavar="NS/NAME[:PORT]",
            help="Engines: the ready endpoints of this Service (EndpointSlices, watched).",
        ),
    ] = None,
    prefill_service: Annotated[
        list[str] | None,
        typer.Option("--prefill-service", metavar="NS/NAME[:PORT]", help="P/D: prefill engines."),
    ] = None,
    decode_service: Annotated[
        list[str] | None,
        typer.Option("--decode-service", metavar="NS/NAME[:PORT]", help="P/D: decode engines."),
    ] = None,
    kubeconfig: Annotated[
        Path | None,
        typer.Option(
            "--kubeconfig", help="With --*service: the cluster (default: in-cluster config)."
        ),
    ] = None,
    context: ContextOpt = None,
    retries: Annotated[
        int,
        typer.Option(
            "--retries",
            min=0,
            max=16,
            help="Send a request that an engine failed before answering to another engine, "
            "at most this many times (off by default).",
        ),
    ] = 0,
) -> None:
    """Route /v1/completions and /v1/chat/completions to the engines."""
    make_router(policy)  # an unknown name fails here, with the valid ones
    whole, prefill, decode = engine or [], prefill_engine or [], decode_engine or []
    refs = [
        *(parse_service_ref(t, "both", "--service") for t in service or []),
        *(parse_service_ref(t, "prefill", "--prefill-service") for t in prefill_service or []),
        *(parse_service_ref(t, "decode", "--decode-service") for t in decode_service or []),
    ]
    if not whole and not decode and not any(r.role != "prefill" for r in refs):
        raise InputError(
            "no engine to serve requests",
            expected="--engine URL, --decode-engine URL, --service or --decode-service",
        )
    if (kubeconfig is not None or context is not None) and not refs:
        raise InputError(
            "--kubeconfig and --context need --service, --prefill-service or --decode-service"
        )
    if context is not None and kubeconfig is None:
        raise InputError("--context needs --kubeconfig")
    for url in (*whole, *prefill, *decode):
        if not url.startswith(("http://", "https://")):
            raise InputError(f"engine URL {url!r}", expected="http://host:port")
    discovery = ServiceDiscovery.connect(refs, kubeconfig, context) if refs else None
    app = make_router_app(
        whole,
        policy,
        scrape_interval,
        seed,
        prefill_urls=prefill,
        decode_urls=decode,
        pd=PDSettings(non_cached_tokens=pd_threshold),
        discovery=discovery,
        retries=retries,
    )
    engines: dict[str, object] = {
        "engines": whole,
        "prefill_engines": prefill,
        "decode_engines": decode,
        "services": [r.key for r in refs],
        "retries": retries,
    }

    def report(bound: int) -> None:
        line = {"msg": "listening", "host": host, "port": bound, "policy": policy}
        sys.stderr.write(json.dumps({**line, **engines}) + "\n")
        sys.stderr.flush()

    asyncio.run(serve_app(app, host, port, on_listening=report))
