"""A request's state inside one engine, and the record it leaves when it ends.

Timestamps follow vLLM V1's request stats (``vllm/v1/metrics/stats.py``): *queued* is when the
engine received it, *scheduled* the first time the scheduler gave it tokens, then first and last
output token. The latency histograms are differences of these: queue time = scheduled - queued,
prefill time = first token - scheduled, decode time = last token - first token, inference time =
last token - scheduled, TTFT = first token - arrival, E2E = end - arrival.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.serving.engine.kv_cache import KVHolding
from gpuplane.serving.request import (
    FinishReason,
    Request,
    RequestState,
    Segment,
    check_transition,
)


class LiveRequest:
    """Mutable per-request state owned by one engine."""

    __slots__ = (
        "arrival_s",
        "cached_tokens",
        "content",
        "external",
        "first_scheduled_s",
        "first_token_s",
        "g_join",
        "kv",
        "last_token_s",
        "length_capped",
        "max_new",
        "num_computed",
        "num_output",
        "num_preemptions",
        "offset",
        "out_base",
        "prompt",
        "queued_s",
        "req",
        "state",
        "target",
        "token_times",
    )

    def __init__(
        self, req: Request, queued_s: float, max_model_len: int, record: bool, external: int = 0
    ) -> None:
        self.req = req
        # Prompt tokens whose KV another engine computed (P/D): loaded, not computed, here.
        self.external = min(external, req.prompt_tokens - 1)
        self.content: tuple[Segment, ...] = req.content()
        self.state = RequestState.WAITING
        self.prompt = req.prompt_tokens
        limit = max_model_len - req.prompt_tokens
        if req.max_tokens is not None:
            limit = min(limit, req.max_tokens)
        self.target = min(req.output_tokens, limit)
        # vLLM's check_stop tests the length caps before EOS.
        self.length_capped = self.target == limit
        # The generation limit a scheduler may assume (SGLang's max_new_tokens estimate).
        self.max_new = limit
        self.num_computed = 0
        self.num_output = 0
        self.kv: KVHolding | None = None
        self.arrival_s = req.arrival_s
        self.queued_s = queued_s
        self.first_scheduled_s: float | None = None
        self.first_token_s: float | None = None
        self.last_token_s = 0.0
        self.num_preemptions = 0
        self.cached_tokens = -1
        self.token_times: list[float] | None = [] if record else None
        # Lazy decode bookkeeping (see decode_set.DecodeSet).
        self.g_join = 0
        self.out_base = 0
        self.offset = 0

    @property
    def num_tokens(self) -> int:
        return self.prompt + self.num_output

    def move(self, new: RequestState) -> None:
        check_transition(self.state, new)
        self.state = new

    def finish_reason(self) -> FinishReason:
        return FinishReason.LENGTH if self.length_capped else FinishReason.STOP

    def record(self, engine_id: str, end_s: float, reason: FinishReason) -> RequestRecord:
        return RequestRecord(  # positional: RequestRecord's field order
            self.req.request_id,
            engine_id,
            self.arrival_s,
            self.queued_s,
            self.first_scheduled_s,
            self.first_token_s,
            self.last_token_s if self.num_output else None,
            end_s,
            self.prompt,
            self.num_output,
            self.cached_tokens if self.cached_tokens > 0 else 0,
            self.num_preemptions,
            reason,
            tuple(self.token_times) if self.token_times is not None else None,
        )


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """What happened to one request on one engine (finished or aborted)."""

    request_id: str
    engine_id: str
    arrival_s: float
    queued_s: float
    first_scheduled_s: float | None
    first_token_s: float | None
    last_token_s: float | None
    end_s: float
    prompt_tokens: int
    output_tokens: int
    cached_tokens: int
    num_preemptions: int
    finish_reason: FinishReason
    token_times: tuple[float, ...] | None = None

    @property
    def ttft_s(self) -> float | None:
        return None if self.first_token_s is None else self.first_token_s - self.arrival_s

    @property
    def e2e_s(self) -> float:
        return self.end_s - self.arrival_s

    @property
    def queue_time_s(self) -> float:
        start = self.first_scheduled_s if self.first_scheduled_s is not None else self.end_s
        return start - self.queued_s

    @property
    def mean_tpot_s(self) -> float:
        """Decode time per output token after the first (vLLM's per-request TPOT)."""
        if self.output_tokens < 2 or self.first_token_s is None or self.last_token_s is None:
            return 0.0
        return (self.last_token_s - self.first_token_s) / (self.output_tokens - 1)
