"""``gpuplane serve router --service``: engines from a Service's EndpointSlices, listed and
watched over real HTTP from a loopback API server (``fake_apiserver.Watched``), followed as
endpoints turn ready, unready and go; and ``--retries`` sending a request an engine dropped to
another engine."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import pytest
from aiohttp import web

from gpuplane.live.http.aiohttp_serve import serving
from gpuplane.live.router.discovery import ServiceDiscovery, parse_service_ref
from gpuplane.live.router.service import make_router_app
from tests.integration.fake_apiserver import Obj, Served, Watched, running_watched
from tests.integration.fake_apiserver import kubeconfig_text as config_text
from tests.integration.llm_servers import MODEL, emulator, post, scrape, total
from tests.integration.waiting import await_until

pytestmark = pytest.mark.integration
SLICES = "/apis/discovery.k8s.io/v1/namespaces/llm/endpointslices"


def eps(name: str, url: str, ready: bool = True) -> Obj:
    """One EndpointSlice of Service llm/engine with the one engine at ``url``."""
    parts = urlsplit(url)
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": name,
            "namespace": "llm",
            "labels": {"kubernetes.io/service-name": "engine"},
            "resourceVersion": "10",
        },
        "addressType": "IPv4",
        "ports": [{"name": "http", "port": parts.port, "protocol": "TCP"}],
        "endpoints": [{"addresses": [parts.hostname], "conditions": {"ready": ready}}],
    }


def completion(prompt: str) -> dict[str, Any]:
    return {"model": MODEL, "prompt": prompt, "max_tokens": 2, "ignore_eos": True}


async def until(check: Any, what: str) -> None:
    await await_until(check, what, poll_s=0.02)


async def routed(client: aiohttp.ClientSession, router: str, engine: str) -> float:
    return total(
        await scrape(client, router), "gpuplane_router_routed_requests_total", server=engine
    )


def test_engines_follow_the_service_endpoint_slices(tmp_path: Path) -> None:
    served = Served(lists={SLICES: []}, groups={"discovery.k8s.io": ["v1"]})
    watched = Watched(served, stream_s=0.5)

    async def main(api: str) -> None:
        config = tmp_path / "kubeconfig"
        config.write_text(config_text({"fake": api}, "fake"))
        ref = parse_service_ref("llm/engine:http", "both", "--service")
        async with emulator() as a, emulator() as b, aiohttp.ClientSession() as client:
            served.lists[SLICES] = [eps("engine-a", a), eps("engine-b", b, ready=False)]
            discovery = ServiceDiscovery.connect([ref], config, None)
            app = make_router_app([], "round-robin", 0.02, discovery=discovery)
            async with serving(app) as r:
                await until(lambda: _health(client, r), "the router sees a ready engine")
                for k in range(4):
                    status, _ = await post(client, r + "/v1/completions", completion(f"q{k}"))
                    assert status == 200
                assert await routed(client, r, a) == 4  # b is not ready in its slice
                watched.emit(SLICES, "MODIFIED", eps("engine-b", b))
                await until(lambda: _ready(client, r, b), "b joins once its endpoint is ready")
                for k in range(4):
                    await post(client, r + "/v1/completions", completion(f"p{k}"))
                assert await routed(client, r, b) == 2
                watched.emit(SLICES, "DELETED", eps("engine-a", a))
                await until(lambda: _gone(client, r, a), "a leaves with its slice")
                before = await routed(client, r, b)
                for k in range(3):
                    await post(client, r + "/v1/completions", completion(f"z{k}"))
                assert await routed(client, r, b) == before + 3

    with running_watched(served, watched) as api:
        asyncio.run(main(api))
    lists = [q for m, p, q, _ in served.requests if p == SLICES and "watch" not in q]
    assert lists and lists[0]["labelSelector"] == ["kubernetes.io/service-name=engine"]
    assert all(m == "GET" for m, _, _, _ in served.requests)  # read-only


async def _health(client: aiohttp.ClientSession, router: str) -> bool:
    async with client.get(router + "/health") as resp:
        return resp.status == 200


async def _ready(client: aiohttp.ClientSession, router: str, engine: str) -> bool:
    samples = await scrape(client, router)
    return total(samples, "gpuplane_router_engine_ready", server=engine) == 1.0


async def _gone(client: aiohttp.ClientSession, router: str, engine: str) -> bool:
    samples = await scrape(client, router)
    return not any(
        n == "gpuplane_router_engine_ready" and lab.get("server") == engine for n, lab, _ in samples
    )


@asynccontextmanager
async def dropping_engine() -> AsyncIterator[str]:
    """An engine that looks healthy but drops every request's connection before answering."""

    async def ok(request: web.Request) -> web.Response:
        return web.Response(text="")

    async def drop(request: web.Request) -> web.Response:
        assert request.transport is not None
        request.transport.close()
        raise ConnectionResetError

    app = web.Application()
    app.router.add_get("/health", ok)
    app.router.add_get("/metrics", ok)
    app.router.add_post("/v1/completions", drop)
    async with serving(app) as url:
        yield url


@pytest.mark.parametrize("retries", [0, 1])
def test_retries_send_a_dropped_request_to_another_engine(retries: int) -> None:
    async def main() -> None:
        async with (
            dropping_engine() as bad,
            emulator() as good,
            aiohttp.ClientSession() as client,
        ):
            app = make_router_app([bad, good], "round-robin", 0.02, retries=retries)
            async with serving(app) as r:
                await until(lambda: _ready(client, r, bad), "both engines ready")
                await until(lambda: _ready(client, r, good), "both engines ready")
                codes = []
                for k in range(2):
                    status, out = await post(client, r + "/v1/completions", completion(f"q{k}"))
                    codes.append(status)
                    if status != 200:
                        assert out["error"]["code"] == 502 and bad in out["error"]["message"]
                samples = await scrape(client, r)
                retried = total(samples, "gpuplane_router_retries_total", server=bad)
                # Round robin over two engines: the dropping one gets at least one request
                # (the retry's own pick moves the counter too, so maybe both).
                dropped = total(samples, "gpuplane_router_routed_requests_total", server=bad)
                assert dropped >= 1
                if retries:
                    assert codes == [200, 200] and retried == dropped
                else:
                    assert codes.count(502) == dropped and retried == 0

    asyncio.run(main())
