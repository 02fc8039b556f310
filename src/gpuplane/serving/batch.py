"""The seam between an engine's batch scheduler and its step-time model.

The scheduler decides what one engine step (one forward pass) contains: some prefill chunks
(new prompt tokens of requests, each after some tokens already in the KV cache) and some decodes
(one new token for each running request, after its current context). The step-time model says how
long that forward pass takes on the engine's GPUs, split into its parts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class PrefillChunk:
    """``new_tokens`` prompt tokens computed this step, after ``context_tokens`` already cached."""

    new_tokens: int
    context_tokens: int = 0


@dataclass(frozen=True, slots=True)
class BatchShape:
    """What one forward pass computes."""

    prefills: tuple[PrefillChunk, ...] = ()
    decode_contexts: tuple[int, ...] = ()
    """One entry per decoding request: its context length (tokens in the KV cache)."""

    @property
    def num_tokens(self) -> int:
        return sum(p.new_tokens for p in self.prefills) + len(self.decode_contexts)

    @property
    def is_empty(self) -> bool:
        return not self.prefills and not self.decode_contexts


@dataclass(frozen=True, slots=True)
class StepTime:
    """The duration of one forward pass and what it is made of (seconds)."""

    total_s: float
    compute_s: float = 0.0
    memory_s: float = 0.0
    communication_s: float = 0.0
    overhead_s: float = 0.0


class StepTimeModel(Protocol):
    """Predicts the duration of one engine step on a given deployment (model, GPUs, TP, links)."""

    def step_time(self, batch: BatchShape) -> StepTime: ...
