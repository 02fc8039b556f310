"""Prefill/decode disaggregation: when to split a request, and the two requests it becomes.

llm-d's ``disagg-profile-handler`` first picks a decode engine, then asks the
``prefix-based-pd-decider``: disaggregate only if the prompt tokens *not* cached on that decode
engine are at least ``non_cached_tokens`` (16 in llm-d's sample configuration); otherwise the
decode engine serves the whole request. A split request is sent to a prefill engine with
``max_tokens=1``; its KV cache then moves to the decode engine (NIXL), which loads all but the
last prompt token and computes that one to produce the first output token. The transfer time is
whatever the caller's KV-transfer model says (bytes over the path's bandwidth).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from gpuplane.serving.request import Request, RequestId

PREFILL_SUFFIX = "#prefill"


@dataclass(frozen=True)
class PDSettings:
    non_cached_tokens: int = 16  # llm-d prefix-based-pd-decider sample threshold


def should_disaggregate(prompt_tokens: int, cached_on_decode: int, settings: PDSettings) -> bool:
    return prompt_tokens - cached_on_decode >= settings.non_cached_tokens


def prefill_request(req: Request) -> Request:
    """The prefill half: the same prompt, one output token."""
    return dataclasses.replace(
        req,
        request_id=RequestId(f"{req.request_id}{PREFILL_SUFFIX}"),
        output_tokens=1,
        max_tokens=1,
        output_key=f"{req.request_id}{PREFILL_SUFFIX}/output",
    )


def original_id(request_id: str) -> str:
    return request_id.removesuffix(PREFILL_SUFFIX)
