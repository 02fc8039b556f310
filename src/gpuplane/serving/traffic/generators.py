"""Synthetic traffic: arrival processes and token-length distributions, from a seeded generator.

Arrivals are Poisson (exponential gaps) or Gamma renewal processes with a chosen coefficient of
variation of the gaps (``cv = 1`` is Poisson; above 1 is burstier, as Vidur and DistServe use to
stress schedulers: shape ``1/cv^2``, scale ``cv^2/rate``). Lengths are drawn either from a
trace's (prompt, output) pairs, which keeps their correlation, or from log-normal distributions
given by their median and log-space sigma. The generator is passed in: the same generator state
gives the same traffic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from gpuplane.core.errors import InputError
from gpuplane.serving.traffic.trace import FloatArray, IntArray, Trace


def gamma_arrivals(
    rate_per_s: float,
    cv: float,
    rng: np.random.Generator,
    *,
    duration_s: float | None = None,
    count: int | None = None,
) -> FloatArray:
    """Arrival times (first at the first gap) with mean rate ``rate_per_s`` and gap CV ``cv``."""
    if rate_per_s <= 0 or cv <= 0:
        raise InputError(f"rate {rate_per_s}, cv {cv}", expected="both positive")
    if (duration_s is None) == (count is None):
        raise InputError("give exactly one of duration_s and count")
    shape = 1.0 / (cv * cv)
    scale = 1.0 / (rate_per_s * shape)
    if count is not None:
        return np.cumsum(rng.gamma(shape, scale, size=count))
    assert duration_s is not None
    chunks: list[FloatArray] = []
    t = 0.0
    while t < duration_s:
        size = max(16, int((duration_s - t) * rate_per_s * 1.1) + 16)
        gaps = np.cumsum(rng.gamma(shape, scale, size=size)) + t
        chunks.append(gaps)
        t = float(gaps[-1])
    arr = np.concatenate(chunks)
    return arr[arr < duration_s]


def poisson_arrivals(
    rate_per_s: float,
    rng: np.random.Generator,
    *,
    duration_s: float | None = None,
    count: int | None = None,
) -> FloatArray:
    """Poisson arrivals: exponential gaps, mean rate ``rate_per_s``."""
    return gamma_arrivals(rate_per_s, 1.0, rng, duration_s=duration_s, count=count)


class LengthSampler(Protocol):
    """Draws (prompt tokens, output tokens) for ``n`` requests."""

    def sample(self, n: int, rng: np.random.Generator) -> tuple[IntArray, IntArray]: ...


@dataclass(frozen=True)
class EmpiricalLengths:
    """(prompt, output) pairs drawn with replacement from observed requests."""

    prompt_tokens: IntArray
    output_tokens: IntArray

    @classmethod
    def from_trace(cls, trace: Trace) -> EmpiricalLengths:
        if len(trace) == 0:
            raise InputError(f"{trace.source} has no requests to draw lengths from")
        return cls(trace.prompt_tokens, trace.output_tokens)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[IntArray, IntArray]:
        idx = rng.integers(0, len(self.prompt_tokens), size=n)
        return self.prompt_tokens[idx], self.output_tokens[idx]


@dataclass(frozen=True)
class LognormalLengths:
    """Independent log-normal prompt and output lengths, clipped to ``[1, max]``."""

    prompt_median: float
    prompt_sigma: float
    output_median: float
    output_sigma: float
    max_prompt: int = 32768
    max_output: int = 8192

    def sample(self, n: int, rng: np.random.Generator) -> tuple[IntArray, IntArray]:
        p = rng.lognormal(np.log(self.prompt_median), self.prompt_sigma, size=n)
        o = rng.lognormal(np.log(self.output_median), self.output_sigma, size=n)
        prompt = np.clip(np.rint(p), 1, self.max_prompt).astype(np.int64)
        output = np.clip(np.rint(o), 1, self.max_output).astype(np.int64)
        return prompt, output


def synthetic_trace(
    arrivals: FloatArray, lengths: LengthSampler, rng: np.random.Generator, source: str
) -> Trace:
    """A trace with these arrival times and lengths drawn from ``lengths``."""
    prompt, output = lengths.sample(len(arrivals), rng)
    return Trace(np.asarray(arrivals, dtype=np.float64), prompt, output, source)
