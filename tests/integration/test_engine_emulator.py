"""``gpuplane serve engine`` over real HTTP on loopback: OpenAI shapes, streaming, vLLM's errors,
readiness during the cold start, /metrics against what was served, batching, determinism."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from gpuplane.live.openai.calls import chat_prompt
from gpuplane.live.openai.text import count_tokens
from tests.integration.llm_servers import MODEL, Json, chunks, emulator, post, settings, stream
from tests.integration.waiting import await_until

pytestmark = pytest.mark.integration
CHAT: Json = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}


def run(body: Callable[[aiohttp.ClientSession], Awaitable[None]]) -> None:
    async def main() -> None:
        async with aiohttp.ClientSession() as client:
            await body(client)

    asyncio.run(main())


def completion(prompt: str = "Tell me about GPUs.", **extra: object) -> Json:
    return {"model": MODEL, "prompt": prompt, "max_tokens": 6, "ignore_eos": True, **extra}


def test_completion_and_chat_answer_in_openai_shapes() -> None:
    async def body(client: aiohttp.ClientSession) -> None:
        async with emulator() as url:
            status, out = await post(client, url + "/v1/completions", completion())
            assert status == 200 and out["object"] == "text_completion"
            choice = out["choices"][0]
            assert choice["finish_reason"] == "length" and len(choice["text"].split()) == 6
            assert out["usage"] == {
                "prompt_tokens": 5,  # 19 characters / 4, rounded up
                "completion_tokens": 6,
                "total_tokens": 11,
                "prompt_tokens_details": {"cached_tokens": 0},
            }
            status, out = await post(
                client, url + "/v1/chat/completions", {**CHAT, "max_tokens": 3}
            )
            assert status == 200 and out["object"] == "chat.completion"
            message = out["choices"][0]["message"]
            assert message["role"] == "assistant" and len(message["content"].split()) <= 3
            async with client.get(url + "/v1/models") as resp:
                models = await resp.json()
            assert [m["id"] for m in models["data"]] == [MODEL]

    run(body)


def test_streams_one_chunk_per_token_then_usage_and_done() -> None:
    async def body(client: aiohttp.ClientSession) -> None:
        async with emulator() as url:
            opts = completion(stream_options={"include_usage": True})
            got = chunks(await stream(client, url + "/v1/completions", opts))
            tokens, last = got[:-1], got[-1]
            assert len(tokens) == 6 and all(c["object"] == "text_completion" for c in got)
            assert [c["choices"][0]["finish_reason"] for c in tokens] == [None] * 5 + ["length"]
            assert last["choices"] == [] and last["usage"]["completion_tokens"] == 6
            chat = {**CHAT, "max_tokens": 4, "ignore_eos": True}
            got = chunks(await stream(client, url + "/v1/chat/completions", chat))
            assert got[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
            assert len(got) == 5 and all("usage" not in c for c in got)
            assert all(c["object"] == "chat.completion.chunk" for c in got)

    run(body)


def test_vllm_error_bodies_for_long_prompts_and_unknown_models() -> None:
    async def body(client: aiohttp.ClientSession) -> None:
        async with emulator() as url:
            status, out = await post(client, url + "/v1/completions", completion(max_tokens=4092))
            assert status == 400
            err = out["error"]
            assert err["type"] == "BadRequestError" and err["code"] == 400
            assert err["message"].startswith(
                "This model's maximum context length is 4096 tokens. However, you requested "
                "4092 output tokens and your prompt contains at least 5 input tokens, for a "
                "total of at least 4097 tokens."
            )
            status, out = await post(
                client, url + "/v1/completions", {**completion(), "model": "x"}
            )
            assert status == 404
            assert out == {
                "error": {
                    "message": "The model `x` does not exist.",
                    "type": "NotFoundError",
                    "param": "model",
                    "code": 404,
                }
            }

    run(body)


def test_health_is_503_while_the_weights_load_then_200() -> None:
    async def body(client: aiohttp.ClientSession) -> None:
        # 20 emulated seconds of loading at 50x: 0.4 s of wall time.
        async with emulator(settings(load_time_s=20.0)) as url:
            async with client.get(url + "/health") as resp:
                assert resp.status == 503
            status, out = await post(client, url + "/v1/completions", completion())
            assert status == 503 and out["error"]["code"] == 503

            async def healthy() -> bool:
                async with client.get(url + "/health") as resp:
                    return resp.status == 200

            await await_until(healthy, "healthy once the weights are loaded")

    run(body)


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            labels = tuple(sorted((k, v) for k, v in s.labels.items() if k != "model_name"))
            out[(s.name, labels)] = s.value
    return out


def test_metrics_count_what_was_served() -> None:
    async def body(client: aiohttp.ClientSession) -> None:
        async with emulator() as url:
            sizes = [3, 5, 8]
            for n in sizes:
                await post(client, url + "/v1/completions", completion(max_tokens=n))
            chat = {**CHAT, "max_tokens": 2, "ignore_eos": True}
            await stream(client, url + "/v1/chat/completions", chat)
            async with client.get(url + "/metrics") as resp:
                m = _samples(await resp.text())
            eng = (("engine", "0"),)
            assert m[("vllm:generation_tokens_total", eng)] == sum(sizes) + 2
            # Three 19-character prompts and the chat template's 26 characters, 4 a token.
            prompt = 3 * 5 + count_tokens(chat_prompt(CHAT["messages"]))
            assert m[("vllm:prompt_tokens_total", eng)] == prompt
            assert m[("vllm:request_success_total", (*eng, ("finished_reason", "length")))] == 4
            assert m[("vllm:time_to_first_token_seconds_count", eng)] == 4
            assert m[("vllm:num_requests_waiting_by_reason", (*eng, ("reason", "capacity")))] == 0
            key = (("handler", "/v1/completions"), ("method", "POST"), ("status", "2xx"))
            assert m[("http_requests_total", key)] == 3

    run(body)


def test_a_queue_makes_later_requests_wait_for_their_first_token() -> None:
    """Six long prompts sent together queue behind one another (one prefill per step), so their
    first tokens come later than the same prompts sent one at a time. Measured on the engine's
    own clock (its TTFT histogram), not the test's wall clock: no timing is asserted."""

    async def body(client: aiohttp.ClientSession) -> None:
        # 2,000-token prompts and a 2,048-token step budget: one prefill per step.
        s = settings(time_scale=1.0, max_num_batched_tokens=2048)
        async with emulator(s) as url:

            async def first_token(k: int) -> None:
                req = completion(
                    f"{k} " + "x" * 8000, max_tokens=2, stream=True
                )  # no shared prefix
                async with client.post(url + "/v1/completions", json=req) as resp:
                    async for line in resp.content:
                        if line.startswith(b"data: {"):
                            return
                raise AssertionError("no token")

            async def ttft_sum() -> float:
                async with client.get(url + "/metrics") as resp:
                    m = _samples(await resp.text())
                return m[("vllm:time_to_first_token_seconds_sum", (("engine", "0"),))]

            for k in range(6):  # one at a time
                await first_token(k)
            alone = await ttft_sum()
            await asyncio.gather(*(first_token(k) for k in range(6, 12)))
            together = await ttft_sum() - alone
            # Alone each waits one prefill; together the k-th waits k of them (1+...+6 = 21
            # prefills against 6): well over twice as long in all. Real time (scale 1): a
            # prefill takes tens of milliseconds, far longer than the six requests take to
            # arrive, so they do queue, whatever the machine's load.
            assert together > 2 * alone, (together, alone)

    run(body)


def test_output_words_are_deterministic_from_the_seed() -> None:
    async def text(seed: int, client: aiohttp.ClientSession) -> str:
        async with emulator(settings(seed=seed)) as url:
            _, out = await post(client, url + "/v1/completions", completion(max_tokens=8))
            value: str = out["choices"][0]["text"]
            return value

    async def body(client: aiohttp.ClientSession) -> None:
        a, b, c = await text(1, client), await text(1, client), await text(2, client)
        assert a == b and a != c

    run(body)


def test_sglang_engine_exports_sglang_families() -> None:
    async def body(client: aiohttp.ClientSession) -> None:
        async with emulator(settings(kind="sglang")) as url:
            await post(client, url + "/v1/completions", completion())
            async with client.get(url + "/metrics") as resp:
                m = _samples(await resp.text())
            assert m[("sglang:generation_tokens_total", ())] == 6
            assert not any(name.startswith("vllm:") for name, _ in m)

    run(body)


def test_a_repeated_long_prompt_hits_the_prefix_cache() -> None:
    async def body(client: aiohttp.ClientSession) -> None:
        async with emulator() as url:
            long = completion("The same system prompt. " * 100)
            _, first = await post(client, url + "/v1/completions", long)
            _, second = await post(client, url + "/v1/completions", long)
            assert first["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
            # 600 tokens: every full 16-token block but the last token's.
            assert second["usage"]["prompt_tokens_details"]["cached_tokens"] == 592

    run(body)
