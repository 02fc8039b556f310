"""The prefill hop of a disaggregated request, as vLLM's P/D proxies make it.

vLLM's ``tests/v1/kv_connector/nixl_integration/toy_proxy_server.py`` and llm-d's routing
sidecar: the prefill engine gets the client's body with ``kv_transfer_params`` asking for a
remote decode (``live.openai.kv_transfer.PREFILL_PARAMS``), ``stream: false``, ``max_tokens:
1`` (and ``max_completion_tokens: 1`` when the body has it), no ``stream_options``, and without
``min_tokens``/``min_completion_tokens`` (not supported on the prefill side); both hops carry the
same ``X-Request-Id``. The ``kv_transfer_params`` of the prefill's answer go into the original
body sent to the decode engine; an answer without them (the prefill engine has no connector,
or its one token was EOS) sends the body unchanged, and the decode engine computes the prompt.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import aiohttp

from gpuplane.live.openai.errors import ApiError
from gpuplane.live.openai.kv_transfer import PREFILL_PARAMS


def prefill_body(body: dict[str, object]) -> dict[str, object]:
    out = {k: v for k, v in body.items() if k not in ("stream_options", "min_tokens")}
    out.pop("min_completion_tokens", None)
    out["kv_transfer_params"] = dict(PREFILL_PARAMS)
    out["stream"] = False
    out["max_tokens"] = 1
    if "max_completion_tokens" in body:
        out["max_completion_tokens"] = 1
    return out


@dataclass(frozen=True, slots=True)
class PrefillAnswer:
    """The prefill engine's answer: the decode body to send, or the error to answer with
    (``status`` and ``body`` as the engine gave them, an OpenAI error body)."""

    decode_body: dict[str, object] | None
    status: int = 200
    error: object = None


async def run_prefill(
    session: aiohttp.ClientSession,
    url: str,
    body: dict[str, object],
    request_id: str,
) -> PrefillAnswer:
    """POST the prefill half to ``url``; raises ApiError 502 when the engine cannot be read."""
    headers = {"Content-Type": "application/json", "X-Request-Id": request_id}
    try:
        async with session.post(url, data=json.dumps(prefill_body(body)), headers=headers) as r:
            status, raw = r.status, await r.read()
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise ApiError(502, f"prefill engine {url} failed: {exc}") from None
    try:
        answer = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ApiError(502, f"prefill engine {url} answered {status} without JSON") from None
    if status != 200:
        return PrefillAnswer(None, status, answer)
    decode = dict(body)
    params = answer.get("kv_transfer_params") if isinstance(answer, dict) else None
    if isinstance(params, dict) and params:
        decode["kv_transfer_params"] = params
    return PrefillAnswer(decode)
