"""Step durations for the engine: one batch at a time, or a whole run of decode steps at once.

A decode run is a sequence of steps with the same requests, each computing one token per
request, so every context grows by one per step and the sum of contexts by the batch size.
A step-time model that can price such a run in one call implements :class:`DecodeRunTimer`;
its answer must equal calling ``step_time`` step by step (the engine's fast mode relies on it
and a test checks it). Any other :class:`~gpuplane.serving.batch.StepTimeModel` still works:
the engine then asks it once per step with the exact contexts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from gpuplane.serving.batch import BatchShape, StepTime, StepTimeModel


@runtime_checkable
class DecodeRunTimer(Protocol):
    """A step-time model that prices ``num_steps`` consecutive decode-only steps at once."""

    def decode_run_times(
        self, num_decodes: int, first_sum_context: int, num_steps: int
    ) -> npt.NDArray[np.float64]:
        """Durations of steps ``0..num_steps-1``; step ``j`` has sum of contexts
        ``first_sum_context + j * num_decodes``."""
        ...


def run_timer(model: StepTimeModel) -> DecodeRunTimer | None:
    """``model`` as a :class:`DecodeRunTimer` if it is one (checked once: the check is slow)."""
    return model if isinstance(model, DecodeRunTimer) else None


def decode_run_durations(
    model: StepTimeModel,
    timer: DecodeRunTimer | None,
    num_decodes: int,
    sum_context: int,
    contexts: Callable[[], list[int]],
    num_steps: int,
) -> npt.NDArray[np.float64]:
    """Durations of the next ``num_steps`` decode-only steps of the current batch."""
    if timer is not None:
        return timer.decode_run_times(num_decodes, sum_context, num_steps)
    base = contexts()
    out = np.empty(num_steps, dtype=np.float64)
    for j in range(num_steps):
        shape = BatchShape(decode_contexts=tuple(c + j for c in base))
        out[j] = model.step_time(shape).total_s
    return out


@dataclass(frozen=True, slots=True)
class LinearStepModel:
    """``t = overhead + per_token x tokens + per_context x (decode contexts + prefill attention)``.

    The prefill attention term is ``sum(new x (context + new))`` per chunk (quadratic in the
    chunk, as DistServe's ``c x sum(l^2)`` prefill fit). A documented stand-in where no fitted or
    roofline model is available; it implements :class:`DecodeRunTimer` exactly.
    """

    overhead_s: float
    per_token_s: float
    per_context_s: float
    per_attention_s: float = 0.0

    def step_time(self, batch: BatchShape) -> StepTime:
        tokens = batch.num_tokens
        ctx = sum(batch.decode_contexts)
        attn = sum(p.new_tokens * (p.context_tokens + p.new_tokens) for p in batch.prefills)
        total = (
            self.overhead_s
            + self.per_token_s * tokens
            + self.per_context_s * ctx
            + self.per_attention_s * attn
        )
        return StepTime(total_s=total, overhead_s=self.overhead_s)

    def decode_run_times(
        self, num_decodes: int, first_sum_context: int, num_steps: int
    ) -> npt.NDArray[np.float64]:
        ctx = first_sum_context + num_decodes * np.arange(num_steps, dtype=np.int64)
        tokens = float(num_decodes)
        out: npt.NDArray[np.float64] = (
            self.overhead_s
            + self.per_token_s * tokens
            + self.per_context_s * ctx.astype(np.float64)
            + self.per_attention_s * 0.0
        )
        return out
