"""Response bodies and SSE chunks as vLLM's OpenAI server writes them.

Completions: ``text_completion`` objects, choices ``{index, text, logprobs, finish_reason,
stop_reason}``; chat: ``chat.completion`` / ``chat.completion.chunk``, the first chunk's delta
carries ``role``. A stream is ``data: {json}\\n\\n`` lines and a final ``data: [DONE]\\n\\n``; with
``stream_options.include_usage`` the last chunk before ``[DONE]`` has ``choices: []`` and the
``usage`` (``vllm/entrypoints/openai/serving_completion.py``, ``serving_chat.py``).
"""

from __future__ import annotations

import json

from gpuplane.live.openai.calls import CallKind

DONE = b"data: [DONE]\n\n"


def sse(obj: object) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def usage(
    prompt_tokens: int, completion_tokens: int, cached_tokens: int | None = None
) -> dict[str, object]:
    details = None if cached_tokens is None else {"cached_tokens": cached_tokens}
    return {
        "prompt_tokens": prompt_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "completion_tokens": completion_tokens,
        "prompt_tokens_details": details,
    }


def _head(kind: CallKind, rid: str, created: int, model: str, chunk: bool) -> dict[str, object]:
    if kind == "completion":
        obj = "text_completion"
    else:
        obj = "chat.completion.chunk" if chunk else "chat.completion"
    return {"id": rid, "object": obj, "created": created, "model": model}


def response(
    kind: CallKind,
    rid: str,
    created: int,
    model: str,
    text: str,
    finish_reason: str,
    use: dict[str, object],
) -> dict[str, object]:
    """A non-streaming answer."""
    choice: dict[str, object] = {"index": 0}
    if kind == "completion":
        choice["text"] = text
    else:
        choice["message"] = {"role": "assistant", "content": text, "tool_calls": []}
    choice.update(logprobs=None, finish_reason=finish_reason, stop_reason=None)
    return {**_head(kind, rid, created, model, False), "choices": [choice], "usage": use}


def chunk(
    kind: CallKind,
    rid: str,
    created: int,
    model: str,
    text: str,
    finish_reason: str | None = None,
    *,
    first: bool = False,
) -> dict[str, object]:
    """One streamed chunk (chat: ``first`` gives the delta its role)."""
    choice: dict[str, object] = {"index": 0}
    if kind == "completion":
        choice["text"] = text
    else:
        delta: dict[str, object] = {"role": "assistant"} if first else {}
        delta["content"] = text
        choice["delta"] = delta
    choice.update(logprobs=None, finish_reason=finish_reason, stop_reason=None)
    return {**_head(kind, rid, created, model, True), "choices": [choice]}


def usage_chunk(
    kind: CallKind, rid: str, created: int, model: str, use: dict[str, object]
) -> dict[str, object]:
    return {**_head(kind, rid, created, model, True), "choices": [], "usage": use}
