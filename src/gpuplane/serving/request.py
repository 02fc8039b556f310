"""An inference request as a client sends it, and the states it moves through inside an engine.

The request carries what a simulator needs to know in advance: its arrival time, its prompt
length, and how many tokens the model will generate before it stops (from a trace). Prompt
*content* is not tokens but :class:`Segment` identities: two requests whose prompts start with the
same segments share those tokens, which is what prefix caching and prefix-aware routing act on
(a system prompt, a document, the earlier turns of a conversation).

States follow vLLM V1's ``RequestStatus`` (``vllm/v1/request.py``): a request waits, runs, may be
preempted (vLLM V1 preempts by recomputation: its KV blocks are freed and it goes back to the
front of the waiting queue with status PREEMPTED, to be prefilled again later), and ends finished
(``stop``: the model emitted EOS; ``length``: ``max_tokens`` or ``max_model_len`` reached) or
aborted (the client or the serving system gave up on it).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NewType

from gpuplane.core.errors import InputError, Location

RequestId = NewType("RequestId", str)


class RequestState(StrEnum):
    WAITING = "waiting"
    RUNNING = "running"
    PREEMPTED = "preempted"
    FINISHED = "finished"
    ABORTED = "aborted"


S = RequestState
VALID_TRANSITIONS: dict[RequestState, frozenset[RequestState]] = {
    S.WAITING: frozenset(
        {
            S.RUNNING,  # the scheduler gave it a token budget and KV blocks
            S.ABORTED,  # cancelled while queued (client gave up, engine removed)
        }
    ),
    S.RUNNING: frozenset(
        {
            S.PREEMPTED,  # KV blocks ran out: its blocks are freed, it is requeued at the front
            S.FINISHED,  # EOS, max_tokens or max_model_len
            S.ABORTED,  # cancelled mid-generation
        }
    ),
    S.PREEMPTED: frozenset(
        {
            S.RUNNING,  # rescheduled: prompt and earlier output are recomputed (prefill again)
            S.WAITING,  # moved to another engine's queue as a fresh request
            S.ABORTED,  # cancelled while waiting to be rescheduled
        }
    ),
    S.FINISHED: frozenset(),
    S.ABORTED: frozenset(),
}


class IllegalTransition(RuntimeError):
    """A state change the engine model does not allow: a bug, never a user mistake."""


def check_transition(old: RequestState, new: RequestState) -> None:
    if new not in VALID_TRANSITIONS[old]:
        raise IllegalTransition(f"request state {old} -> {new} is not allowed")


class FinishReason(StrEnum):
    """vLLM's ``FinishReason`` as exported in the ``finished_reason`` label."""

    STOP = "stop"
    LENGTH = "length"
    ABORT = "abort"
    ERROR = "error"  # vLLM's FINISHED_ERROR (e.g. a failed KV load under policy ``fail``)


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of tokens with an identity: segments with the same key hold the same tokens."""

    key: str
    num_tokens: int


@dataclass(frozen=True, slots=True)
class Request:
    """One request as the client sends it.

    ``output_tokens`` is how many tokens the model generates before EOS (known from the trace);
    ``max_tokens`` is the client's limit (None: up to ``max_model_len``), so generation stops at
    the smaller of the two. ``segments`` describe the prompt's content for prefix sharing (empty:
    the prompt is unique to this request); ``output_key`` names the generated tokens so that a
    follow-up turn whose prompt contains them can hit them in the cache.
    """

    request_id: RequestId
    arrival_s: float
    prompt_tokens: int
    output_tokens: int
    segments: tuple[Segment, ...] = ()
    output_key: str | None = None
    session_id: str | None = None
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.prompt_tokens < 1:
            raise InputError(
                f"prompt_tokens={self.prompt_tokens}", expected=">= 1", location=self._where()
            )
        if self.output_tokens < 1:
            raise InputError(
                f"output_tokens={self.output_tokens}", expected=">= 1", location=self._where()
            )
        if self.max_tokens is not None and self.max_tokens < 1:
            raise InputError(
                f"max_tokens={self.max_tokens}", expected=">= 1", location=self._where()
            )
        if not self.segments:
            return
        if sum(s.num_tokens for s in self.segments) != self.prompt_tokens:
            total = sum(s.num_tokens for s in self.segments)
            raise InputError(
                f"segments hold {total} tokens but prompt_tokens={self.prompt_tokens}",
                expected="segment lengths that add up to the prompt",
                location=self._where(),
            )
        if any(s.num_tokens < 1 for s in self.segments):
            raise InputError(
                "a segment has no tokens", expected=">= 1 token each", location=self._where()
            )

    def _where(self) -> Location:
        return Location(field=f"request {self.request_id}")

    def content(self) -> tuple[Segment, ...]:
        """The prompt then the output as segments: what the request's KV cache holds, in order."""
        prompt = self.segments or (Segment(f"{self.request_id}/prompt", self.prompt_tokens),)
        out_key = self.output_key or f"{self.request_id}/output"
        return (*prompt, Segment(out_key, self.output_tokens))
