"""``gpuplane serve router`` over real HTTP: spreading requests with the twin's routers, streams
passed through unchanged, 503 with an OpenAI error body when no engine is ready."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.llm_servers import MODEL, Json, chunks, emulator, post, router, stream

pytestmark = pytest.mark.integration


def run(body: Callable[[aiohttp.ClientSession], Awaitable[None]]) -> None:
    async def main() -> None:
        async with aiohttp.ClientSession() as client:
            await body(client)

    asyncio.run(main())


def completion(prompt: str, **extra: object) -> Json:
    return {"model": MODEL, "prompt": prompt, "max_tokens": 4, "ignore_eos": True, **extra}


async def routed(client: aiohttp.ClientSession, url: str) -> dict[str, float]:
    async with client.get(url + "/metrics") as resp:
        text = await resp.text()
    out: dict[str, float] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == "gpuplane_router_routed_requests_total":
                out[s.labels["server"]] = s.value
            elif s.name == "vllm:num_incoming_requests_total":
                out["incoming:" + s.labels["model"]] = s.value
    return out


def test_round_robin_spreads_and_streams_pass_through() -> None:
    async def body(client: aiohttp.ClientSession) -> None:
        async with emulator() as a, emulator() as b, router([a, b], "round-robin") as r:
            for k in range(4):
                status, out = await post(client, r + "/v1/completions", completion(f"q{k}"))
                assert status == 200 and out["usage"]["completion_tokens"] == 4
            opts = {"stream_options": {"include_usage": True}}
            got = chunks(await stream(client, r + "/v1/completions", completion("s", **opts)))
            assert len(got) == 5 and got[-1]["usage"]["completion_tokens"] == 4
            counts = await routed(client, r)
            assert sorted([counts[a], counts[b]]) == [2, 3]  # engines in URL order, k mod 2
            assert counts["incoming:" + MODEL] == 5

    run(body)


def test_llm_d_scorer_keeps_a_shared_prefix_on_one_engine() -> None:
    async def body(client: aiohttp.ClientSession) -> None:
        async with emulator() as a, emulator() as b, router([a, b], "llm-d") as r:
            doc = "A long shared document about GPU scheduling. " * 40
            for k in range(4):
                status, _ = await post(client, r + "/v1/completions", completion(doc + str(k)))
                assert status == 200
            counts = await routed(client, r)
            assert sorted(counts[u] for u in (a, b) if u in counts) == [4]

    run(body)


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_no_ready_engine_is_a_503_with_an_openai_error_body() -> None:
    async def body(client: aiohttp.ClientSession) -> None:
        async with router([_dead_url()], "least-outstanding") as r:
            async with client.get(r + "/health") as resp:
                assert resp.status == 503
            status, out = await post(client, r + "/v1/completions", completion("x"))
            assert status == 503
            assert out["error"]["type"] == "ServiceUnavailableError"
            assert out["error"]["code"] == 503 and "no ready engine" in out["error"]["message"]

    run(body)
