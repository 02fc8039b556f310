"""The real ``openai`` client streaming against the emulator (and the router in front of it)."""

from __future__ import annotations

import asyncio

import pytest

from tests.integration.llm_servers import MODEL, emulator, router

openai = pytest.importorskip("openai")
pytestmark = pytest.mark.integration


def test_openai_client_streams_chat_and_reads_errors() -> None:
    async def body() -> None:
        async with emulator() as url, router([url], "least-outstanding") as r:
            for base in (url, r):
                client = openai.AsyncOpenAI(base_url=base + "/v1", api_key="none")
                stream = await client.chat.completions.create(
                    model=MODEL,
                    messages=[{"role": "user", "content": "Hello"}],
                    max_tokens=5,
                    stream=True,
                    stream_options={"include_usage": True},
                    extra_body={"ignore_eos": True},
                )
                text, usage = "", None
                async for chunk in stream:
                    if chunk.choices:
                        text += chunk.choices[0].delta.content or ""
                    if chunk.usage is not None:
                        usage = chunk.usage
                assert len(text.split()) == 5
                assert usage is not None and usage.completion_tokens == 5
                with pytest.raises(openai.NotFoundError, match="does not exist"):
                    await client.completions.create(model="other", prompt="x", max_tokens=1)
                await client.close()

    asyncio.run(body())
