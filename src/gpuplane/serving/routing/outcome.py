"""What became of every request in a serving simulation, and the latency summary.

Conservation: every request that arrived ends in exactly one state: completed, rejected (with
the reason: prompt too long for every engine, no ready engine and the router's queue full),
aborted (its engine was removed and rerouting was exhausted), or still in flight when the run
stopped.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from gpuplane.core.tsdb import SeriesStore


class Status(StrEnum):
    COMPLETED = "completed"
    REJECTED = "rejected"
    ABORTED = "aborted"
    IN_FLIGHT = "in_flight"


@dataclass(frozen=True, slots=True)
class RequestOutcome:
    request_id: str
    status: Status
    reason: str
    arrival_s: float
    engine_id: str | None = None
    prefill_engine_id: str | None = None
    session_id: str | None = None
    first_token_s: float | None = None
    end_s: float | None = None
    prompt_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    num_preemptions: int = 0
    reroutes: int = 0

    @property
    def ttft_s(self) -> float | None:
        return None if self.first_token_s is None else self.first_token_s - self.arrival_s

    @property
    def e2e_s(self) -> float | None:
        return None if self.end_s is None else self.end_s - self.arrival_s


def weighted_percentile(
    values: npt.NDArray[np.float64], weights: npt.NDArray[np.int64], q: float
) -> float:
    """The smallest value with at least ``q`` (0-100) percent of the weight at or below it."""
    if len(values) == 0:
        return float("nan")
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order])
    i = int(np.searchsorted(cum, q / 100.0 * cum[-1], side="left"))
    return float(values[order][min(i, len(values) - 1)])


@dataclass(frozen=True)
class SimulationResult:
    outcomes: tuple[RequestOutcome, ...]
    itl_values: npt.NDArray[np.float64]
    itl_weights: npt.NDArray[np.int64]
    end_s: float
    num_arrived: int
    store: SeriesStore | None = None

    def count(self, status: Status) -> int:
        return sum(1 for o in self.outcomes if o.status is status)

    def counts(self) -> dict[str, int]:
        return {s.value: self.count(s) for s in Status}

    def completed(self) -> list[RequestOutcome]:
        return [o for o in self.outcomes if o.status is Status.COMPLETED]

    def percentile(self, metric: str, q: float) -> float:
        """``ttft``, ``e2e`` (completed requests) or ``itl`` (every output token), in seconds."""
        if metric == "itl":
            return weighted_percentile(self.itl_values, self.itl_weights, q)
        done = self.completed()
        vals = [o.ttft_s if metric == "ttft" else o.e2e_s for o in done]
        arr = np.asarray([v for v in vals if v is not None], dtype=np.float64)
        return weighted_percentile(arr, np.ones(len(arr), dtype=np.int64), q)

    def latency_summary(self, qs: tuple[float, ...] = (50.0, 90.0, 99.0)) -> dict[str, float]:
        out: dict[str, float] = {}
        for metric in ("ttft", "itl", "e2e"):
            for q in qs:
                out[f"{metric}_p{q:g}_s"] = self.percentile(metric, q)
        return out

    def conservation_problems(self) -> list[str]:
        """Empty when every arrived request is in exactly one final state."""
        problems = []
        ids = [o.request_id for o in self.outcomes]
        if len(ids) != len(set(ids)):
            problems.append("a request has more than one outcome")
        if len(self.outcomes) != self.num_arrived:
            problems.append(f"{self.num_arrived} arrived but {len(self.outcomes)} outcomes")
        for o in self.outcomes:
            if o.status is Status.COMPLETED and (o.end_s is None or o.output_tokens < 1):
                problems.append(f"{o.request_id} completed without output")
            if o.status in (Status.REJECTED, Status.ABORTED) and not o.reason:
                problems.append(f"{o.request_id} {o.status} without a reason")
        return problems
