"""A ``/v1/completions`` or ``/v1/chat/completions`` body read into what the emulator needs.

Read: ``model``, ``prompt`` (a string, a one-string list or token ids) or ``messages`` (string
or text-part contents), ``max_tokens`` (chat also ``max_completion_tokens``), ``min_tokens``,
``ignore_eos``, ``stream``, ``stream_options.include_usage``, ``seed``, ``n`` (1 only), and
``user``/``session_id`` (a session key for session-affinity routing). Everything else is
accepted and ignored, as vLLM ignores fields it does not know.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from gpuplane.live.openai.errors import ApiError

CallKind = Literal["completion", "chat"]


@dataclass(frozen=True, slots=True)
class Call:
    kind: CallKind
    model: str
    prompt: str
    prompt_ids: tuple[int, ...] | None  # a prompt given as token ids
    max_tokens: int | None
    min_tokens: int
    ignore_eos: bool
    stream: bool
    include_usage: bool
    seed: int | None
    session: str | None


def _int_field(body: Mapping[str, object], key: str, low: int) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ApiError(400, f"{key} must be an integer >= {low}, got {value!r}", key)
    return value


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict)]
        return "".join(str(p) for p in parts)
    if content is None:
        return ""
    raise ApiError(400, "message content must be a string or a list of parts", "messages")


def chat_prompt(messages: object) -> str:
    """The prompt a chat template makes of the messages (a plain role-tagged template)."""
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "messages must be a non-empty list", "messages")
    out: list[str] = []
    for m in messages:
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise ApiError(400, "each message needs a role", "messages")
        out.append(f"<|{m['role']}|>\n{_content_text(m.get('content'))}\n")
    return "".join(out) + "<|assistant|>\n"


def _prompt(body: Mapping[str, object]) -> tuple[str, tuple[int, ...] | None]:
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        return prompt, None
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        return prompt[0], None
    if isinstance(prompt, list) and prompt and all(type(t) is int for t in prompt):
        ids = tuple(t for t in prompt if type(t) is int)
        return " ".join(str(t) for t in ids), ids
    raise ApiError(400, "prompt must be a string, a list of one string or token ids", "prompt")


def read_call(kind: CallKind, body: object) -> Call:
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str):
        raise ApiError(400, "model must be a string", "model")
    if kind == "chat":
        prompt, ids = chat_prompt(body.get("messages")), None
        max_tokens = _int_field(body, "max_completion_tokens", 1)
        if max_tokens is None:
            max_tokens = _int_field(body, "max_tokens", 1)
    else:
        prompt, ids = _prompt(body)
        max_tokens = _int_field(body, "max_tokens", 1)
    if (_int_field(body, "n", 1) or 1) > 1:
        raise ApiError(400, "the emulator serves n=1 only", "n")
    options = body.get("stream_options")
    include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
    session = body.get("session_id") or body.get("user")
    min_tokens = _int_field(body, "min_tokens", 0) or 0
    if max_tokens is not None and min_tokens > max_tokens:
        raise ApiError(
            400,
            f"min_tokens must be less than or equal to max_tokens={max_tokens}, got {min_tokens}.",
            "min_tokens",
        )
    return Call(
        kind=kind,
        model=model,
        prompt=prompt,
        prompt_ids=ids,
        max_tokens=max_tokens,
        min_tokens=min_tokens,
        ignore_eos=bool(body.get("ignore_eos", False)),
        stream=bool(body.get("stream", False)),
        include_usage=include_usage,
        seed=_int_field(body, "seed", 0),
        session=str(session) if session is not None else None,
    )
