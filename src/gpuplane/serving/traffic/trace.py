"""A request trace as arrays: arrival times and token counts, and the ways to reshape it.

Times are seconds from the first request. Scaling keeps the trace's shape: ``time_scaled(k)``
divides every inter-arrival by ``k`` (the same requests, ``k`` times the rate, ``1/k`` of the
span); ``rate_scaled(k, duration_s)`` does that and then repeats the compressed trace back to
back to fill ``duration_s``, so one hour at 20x the rate holds about 20x the requests of the
original hour, with the original burst pattern in each repetition.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuplane.core.errors import InputError
from gpuplane.serving.request import Request, RequestId

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Trace:
    """Requests as columns: ``arrival_s`` (sorted, from 0), prompt and output token counts."""

    arrival_s: FloatArray
    prompt_tokens: IntArray
    output_tokens: IntArray
    source: str = "trace"

    def __post_init__(self) -> None:
        n = len(self.arrival_s)
        if len(self.prompt_tokens) != n or len(self.output_tokens) != n:
            raise InputError("trace columns have different lengths", location=None)
        if n and np.any(np.diff(self.arrival_s) < 0):
            raise InputError(f"{self.source}: arrival times are not sorted")
        if n and (self.prompt_tokens.min() < 1 or self.output_tokens.min() < 1):
            raise InputError(f"{self.source}: a request has no prompt or no output tokens")

    def __len__(self) -> int:
        return len(self.arrival_s)

    @property
    def span_s(self) -> float:
        return float(self.arrival_s[-1] - self.arrival_s[0]) if len(self) else 0.0

    @property
    def mean_rate(self) -> float:
        """Requests per second over the span (0 for fewer than two requests)."""
        return (len(self) - 1) / self.span_s if self.span_s > 0 else 0.0

    def time_scaled(self, factor: float) -> Trace:
        """Every inter-arrival divided by ``factor`` (``factor`` times the request rate)."""
        if factor <= 0:
            raise InputError(f"rate factor {factor}", expected="a positive number")
        start = self.arrival_s[0] if len(self) else 0.0
        arr = (self.arrival_s - start) / factor
        return Trace(arr, self.prompt_tokens, self.output_tokens, f"{self.source} x{factor:g}")

    def rate_scaled(self, factor: float, duration_s: float) -> Trace:
        """``factor`` times the rate, repeated back to back to cover ``duration_s``."""
        base = self.time_scaled(factor)
        if len(base) == 0 or duration_s <= 0:
            return base.window(0.0, max(duration_s, 0.0))
        # One repetition lasts its span plus one mean gap, so repeats do not collide.
        period = base.span_s + (base.span_s / max(len(base) - 1, 1))
        reps = int(np.ceil(duration_s / period)) if period > 0 else 1
        offsets = np.repeat(np.arange(reps) * period, len(base))
        arr = np.tile(base.arrival_s, reps) + offsets
        out = Trace(
            arr,
            np.tile(base.prompt_tokens, reps),
            np.tile(base.output_tokens, reps),
            f"{self.source} x{factor:g} over {duration_s:g}s",
        )
        return out.window(0.0, duration_s)

    def window(self, start_s: float, end_s: float) -> Trace:
        """Requests arriving in ``[start_s, end_s)``, times kept."""
        lo = int(np.searchsorted(self.arrival_s, start_s, side="left"))
        hi = int(np.searchsorted(self.arrival_s, end_s, side="left"))
        return Trace(
            self.arrival_s[lo:hi], self.prompt_tokens[lo:hi], self.output_tokens[lo:hi], self.source
        )

    def head(self, n: int) -> Trace:
        return Trace(
            self.arrival_s[:n], self.prompt_tokens[:n], self.output_tokens[:n], self.source
        )

    def requests(self, prefix: str = "r", offset_s: float = 0.0) -> Iterator[Request]:
        """The trace as requests (ids ``{prefix}{index}``), made one at a time."""
        arr = self.arrival_s.tolist()
        prompt = self.prompt_tokens.tolist()
        output = self.output_tokens.tolist()
        for i in range(len(arr)):
            yield Request(RequestId(f"{prefix}{i}"), arr[i] + offset_s, prompt[i], output[i])
