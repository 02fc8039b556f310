"""P/D disaggregation live: a prefill emulator, a decode emulator and the router on loopback,
the ``openai`` client streaming through them. The decode engine must load the prompt's KV
instead of computing it, the transfer must take the twin's KV-link time, and the TTFT the
client sees must be at least the twin's P/D TTFT for the same request (the emulated steps are
the twin's; the wall can only add to them)."""

from __future__ import annotations

import asyncio
import json
import math
import time

import aiohttp
import pytest

from gpuplane.live.emulator.kv_config import FailurePolicy, KvTransferConfig
from gpuplane.live.emulator.service import RUNTIME, make_app
from gpuplane.live.emulator.settings import build
from gpuplane.live.http.aiohttp_serve import serving
from gpuplane.live.openai.kv_transfer import PREFILL_PARAMS
from gpuplane.live.openai.text import segments_of, text_tokens
from gpuplane.serving.models.catalog import resolve_model
from gpuplane.serving.request import Request, RequestId
from gpuplane.serving.routing.registry import make_router
from gpuplane.serving.routing.simulation import ServingSimulation
from gpuplane.serving.steptime.kv_transfer import KvLink, kv_transfer_s
from tests.integration.llm_servers import (
    MODEL,
    Json,
    chunks,
    emulator,
    post,
    router,
    scrape,
    settings,
    stream,
    total,
)

openai = pytest.importorskip("openai")
pytestmark = pytest.mark.integration

LINK_GBIT = 10.0  # a slow NIC, so the transfer is a visible part of the TTFT
PROMPT = "Disaggregated serving moves the prompt's KV cache between engines. " * 120
OUTPUT = 8


def kv(engine_id: str, policy: FailurePolicy = "fail") -> KvTransferConfig:
    return KvTransferConfig("NixlConnector", "kv_both", engine_id, policy)


def twin_ttft(num_tokens: int) -> float:
    """The twin's P/D model for one request: prefill engine, KV over the link, decode engine."""
    s = settings()
    prefill, decode = build(s)[0].engine, build(s)[0].engine
    prefill.engine_id, decode.engine_id = "p", "d"
    shape, link = resolve_model(s.spec.model), KvLink.nic(LINK_GBIT)
    sim = ServingSimulation(
        make_router("llm-d"),
        prefill_router=make_router("llm-d"),
        kv_transfer_s=lambda tokens: kv_transfer_s(tokens, shape, link),
    )
    sim.add_engine(prefill, role="prefill")
    sim.add_engine(decode, role="decode")
    tokens = text_tokens(PROMPT)
    assert len(tokens) == num_tokens
    req = Request(RequestId("r"), 0.0, num_tokens, OUTPUT, segments_of(tokens), max_tokens=OUTPUT)
    sim.submit([req])
    (outcome,) = sim.run().outcomes
    assert outcome.prefill_engine_id == "p" and outcome.engine_id == "d"
    assert outcome.ttft_s is not None
    return outcome.ttft_s


def test_pd_streams_through_the_router_and_the_decode_engine_loads_the_prompt() -> None:
    async def body() -> None:
        s_p = settings(time_scale=1.0, kv_transfer=kv("prefill-engine"))
        s_d = settings(time_scale=1.0, kv_transfer=kv("decode-engine"), kv_link_gbit=LINK_GBIT)
        async with (
            emulator(s_p) as p,
            emulator(s_d) as d,
            router([], "llm-d", prefill=[p], decode=[d]) as r,
            aiohttp.ClientSession() as http,
        ):
            client = openai.AsyncOpenAI(base_url=r + "/v1", api_key="none")
            start = time.perf_counter()
            ttft, text, usage = None, "", None
            response = await client.completions.create(
                model=MODEL,
                prompt=PROMPT,
                max_tokens=OUTPUT,
                stream=True,
                stream_options={"include_usage": True},
                extra_body={"ignore_eos": True},
            )
            async for chunk in response:
                if chunk.choices and chunk.choices[0].text and ttft is None:
                    ttft = time.perf_counter() - start
                text += chunk.choices[0].text if chunk.choices else ""
                usage = chunk.usage or usage
            await client.close()
            assert usage is not None and usage.completion_tokens == OUTPUT
            n = usage.prompt_tokens
            assert n == len(text_tokens(PROMPT)) and len(text.split()) == OUTPUT

            dec, pre, rt = await scrape(http, d), await scrape(http, p), await scrape(http, r)
            by_source = "vllm:prompt_tokens_by_source_total"
            # The decode engine computed one prompt token and loaded the rest.
            assert total(dec, by_source, source="local_compute") == 1
            assert total(dec, by_source, source="external_kv_transfer") == n - 1
            assert total(dec, "vllm:request_prefill_kv_computed_tokens_sum") == 1
            assert total(dec, "gpuplane_emulator_kv_pulls_total", outcome="transferred") == 1
            # The prefill engine computed the prompt and produced the one token.
            assert total(pre, by_source, source="local_compute") == n
            assert total(pre, "vllm:generation_tokens_total") == 1
            assert total(pre, "vllm:nixl_num_kv_expired_reqs_total") == 0
            # The transfer took the twin's KV-link time for the prompt's blocks.
            blocks = math.ceil(n / 16)
            shape = resolve_model("Llama-3.1-8B")
            expected = kv_transfer_s(blocks * 16, shape, KvLink.nic(LINK_GBIT))
            assert total(dec, "vllm:nixl_xfer_time_seconds_count") == 1
            assert total(dec, "vllm:nixl_xfer_time_seconds_sum") == pytest.approx(expected)
            moved = blocks * 16 * shape.kv_bytes_per_token(1)
            assert total(dec, "vllm:nixl_bytes_transferred_sum") == moved
            assert total(dec, "vllm:nixl_num_failed_transfers_total") == 0
            assert total(rt, "gpuplane_router_disaggregated_requests_total") == 1
            assert total(rt, "gpuplane_router_routed_requests_total", server=p) == 1
            assert total(rt, "gpuplane_router_routed_requests_total", server=d) == 1
            # TTFT: never below the twin's (emulated steps and transfer are the twin's; the
            # blocks round the transfer up by < 16 tokens), and comparable to it: the wall adds
            # three HTTP hops, bounded loosely (the machine running the tests may be loaded).
            twin = twin_ttft(n)
            assert expected < twin
            assert ttft is not None and 0.97 * twin <= ttft <= twin + 5.0

    asyncio.run(body())


def test_engines_too_short_for_the_prompt_are_not_routed_to() -> None:
    """The router reads each engine's max_model_len from /v1/models: a prefill engine too short
    for the prompt is skipped (the decode engine serves it whole, as the twin does), and a
    prompt too long for every engine is answered 400 in vLLM's words by the router itself."""

    async def body() -> None:
        short = settings(kv_transfer=kv("p"), max_model_len=512)
        async with (
            emulator(short) as p,
            emulator(settings(kv_transfer=kv("d"))) as d,
            router([], "round-robin", prefill=[p], decode=[d]) as r,
            router([p], "round-robin") as only_short,
            aiohttp.ClientSession() as http,
        ):
            req = {"model": MODEL, "prompt": PROMPT[:4000], "max_tokens": 4}
            status, out = await post(http, r + "/v1/completions", req)
            assert status == 200 and out["usage"]["completion_tokens"] >= 1
            rt = await scrape(http, r)
            assert total(rt, "gpuplane_router_disaggregated_requests_total") == 0
            assert total(rt, "gpuplane_router_routed_requests_total", server=p) == 0
            assert total(rt, "gpuplane_router_routed_requests_total", server=d) == 1
            status, out = await post(http, only_short + "/v1/completions", req)
            assert status == 400 and out["error"]["type"] == "BadRequestError"
            assert "maximum context length is 512 tokens" in out["error"]["message"]
            assert out["error"]["param"] == "input_tokens"
            rt = await scrape(http, only_short)
            assert total(rt, "gpuplane_router_prompt_too_long_total") == 1
            assert total(rt, "gpuplane_router_routed_requests_total", server=p) == 0

    asyncio.run(body())


async def _prefill_directly(
    http: aiohttp.ClientSession, p: str, prompt: str, engine_id: str = "p"
) -> Json:
    body = {"model": MODEL, "prompt": prompt, "max_tokens": 1, "kv_transfer_params": PREFILL_PARAMS}
    status, out = await post(http, p + "/v1/completions", body)
    assert status == 200 and out["choices"][0]["finish_reason"] == "length"
    params: Json = out["kv_transfer_params"]
    assert params["do_remote_prefill"] is True and params["do_remote_decode"] is False
    assert params["remote_engine_id"] == engine_id and params["tp_size"] == 1
    assert len(params["remote_block_ids"]) == math.ceil(out["usage"]["prompt_tokens"] / 16)
    return params


def test_expired_or_unknown_blocks_fail_or_recompute_as_the_policy_says() -> None:
    async def body() -> None:
        prompt = PROMPT[:2000]
        # Holds expire after 1 emulated second (VLLM_NIXL_ABORT_REQUEST_TIMEOUT=1): 20 ms here.
        s_p = settings(kv_transfer=kv("p"), kv_hold_timeout_s=1.0)
        async with (
            emulator(s_p) as p,
            emulator(settings(kv_transfer=kv("p-480"))) as p_480,
            emulator(settings(kv_transfer=kv("d-fail"))) as d_fail,
            emulator(settings(kv_transfer=kv("d-re", "recompute"))) as d_re,
            aiohttp.ClientSession() as http,
        ):
            params = await _prefill_directly(http, p, prompt)
            await asyncio.sleep(0.1)
            pre = await scrape(http, p)
            assert total(pre, "vllm:nixl_num_kv_expired_reqs_total") == 1
            assert total(pre, "vllm:kv_cache_usage_perc") == 0  # the expired hold freed them
            decode = {"model": MODEL, "prompt": prompt, "max_tokens": 3, "ignore_eos": True}
            decode["kv_transfer_params"] = params
            # kv_load_failure_policy=fail (vLLM's default): the request ends in an error.
            status, out = await post(http, d_fail + "/v1/completions", decode)
            assert status == 500 and out["error"] == {
                "message": "Internal server error",
                "type": "InternalServerError",
                "param": None,
                "code": 500,
            }
            streamed = await stream(http, d_fail + "/v1/completions", decode)
            assert streamed[-1] == "[DONE]" and json.loads(streamed[0])["error"]["code"] == 500
            # Both are finished requests with reason "error" (vLLM's FINISHED_ERROR).
            failed = await scrape(http, d_fail)
            success = "vllm:request_success_total"
            assert total(failed, success, finished_reason="error") == 2
            assert total(failed, success) == 2
            assert total(failed, "vllm:e2e_request_latency_seconds_count") == 2
            fetch = "vllm:num_requests_kv_fetch_by_stage"
            stages = {lab["stage"] for n, lab, _ in failed if n == fetch}
            assert stages == {"waiting_to_start", "in_progress", "completed_waiting"}
            assert total(failed, fetch) == 0
            # recompute: the decode engine computes the whole prompt, and says so.
            status, out = await post(http, d_re + "/v1/completions", decode)
            assert status == 200 and out["usage"]["completion_tokens"] == 3
            n = out["usage"]["prompt_tokens"]
            dec = await scrape(http, d_re)
            by_source = "vllm:prompt_tokens_by_source_total"
            assert total(dec, by_source, source="local_compute") == n
            assert total(dec, by_source, source="external_kv_transfer") == 0
            assert total(dec, "gpuplane_emulator_kv_pulls_total", outcome="recomputed") == 1
            assert total(dec, "vllm:nixl_num_failed_transfers_total") == 1
            # A fresh hold (480 s) is read once; a second read of the same blocks finds nothing.
            params = await _prefill_directly(http, p_480, prompt, "p-480")
            # Until the decode engine reads them, the blocks count against the prefill's pool.
            pre = await scrape(http, p_480)
            (pool,) = [float(lab["num_gpu_blocks"]) for n, lab, _ in pre if n.endswith("g_info")]
            usage = total(pre, "vllm:kv_cache_usage_perc")
            assert usage == pytest.approx(len(params["remote_block_ids"]) / pool)
            fresh = {**decode, "kv_transfer_params": params}
            got = chunks(await stream(http, d_re + "/v1/completions", fresh))
            assert "".join(c["choices"][0]["text"] for c in got if c["choices"])
            assert total(await scrape(http, p_480), "vllm:kv_cache_usage_perc") == 0
            again = await scrape(http, d_re)
            assert total(again, "gpuplane_emulator_kv_pulls_total", outcome="transferred") == 1
            status, _ = await post(http, d_re + "/v1/completions", fresh)
            again = await scrape(http, d_re)
            assert total(again, "gpuplane_emulator_kv_pulls_total", outcome="recomputed") == 2

    asyncio.run(body())


def test_an_unread_hold_is_freed_at_its_deadline_without_any_other_call() -> None:
    async def body() -> None:
        # 50 emulated seconds at time scale 50: the hold ends 1 s (wall) after the prefill.
        s = settings(kv_transfer=kv("p"), kv_hold_timeout_s=50.0)
        built, load_s = build(s)
        app = make_app(s, built.engine, load_s)
        engine = app[RUNTIME].engine
        async with serving(app) as p, aiohttp.ClientSession() as http:
            params = await _prefill_directly(http, p, PROMPT[:2000])
            assert engine.num_held_blocks() == len(params["remote_block_ids"])
            assert engine.kv_usage() > 0
            await asyncio.sleep(1.5)  # no scrape, no read: the connector's timer frees it
            assert engine.held == {} and engine.kv_usage() == 0
            pre = await scrape(http, p)
            assert total(pre, "vllm:nixl_num_kv_expired_reqs_total") == 1

    asyncio.run(body())
