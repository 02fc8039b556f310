"""The capacity seam: how many replicas a pool needs is asked of a ``CapacityModel``.

The scaler cannot import the serving layer (a sibling), so whoever builds the snapshot passes a
model of one pool's replicas: given a replica count, an arrival rate and the request mix, what
TTFT p90 and ITL p99 would the pool show, and how loaded would it be. The twin implements it
with the serving engine's step-time and KV model; ``analytic.AnalyticCapacity`` is a closed-form
stand-in. Predictions are steady-state figures for a router that spreads requests evenly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from itertools import pairwise
from typing import Protocol


class PoolRole(StrEnum):
    """What a pool's replicas do.

    ``unified``: every replica prefills and decodes (vLLM's default, chunked prefill mixing
    both in one step). Under prefill/decode disaggregation the prompt runs on a ``prefill``
    pool, the KV cache moves to a ``decode`` pool which generates the output; the two are
    separate Deployments and scale separately.
    """

    UNIFIED = "unified"
    PREFILL = "prefill"
    DECODE = "decode"


@dataclass(frozen=True, slots=True)
class LoadMix:
    """The request mix of the recent window (``vllm:request_prompt_tokens`` and
    ``vllm:request_generation_tokens`` means).

    ``prompt_quantiles`` is the prompt-length distribution as ``(probability, tokens)`` points
    in increasing order (what ``histogram_quantile`` over ``vllm:request_prompt_tokens`` gives).
    Tail latencies depend on it, not on the mean: the 90th-percentile TTFT is mostly the
    prefill of a 90th-percentile prompt, and the 99th-percentile inter-token gap is a decode
    step stalled behind a long prompt's prefill. Without points every prompt is taken to be
    the mean length.

    ``arrival_scv`` says how bursty the arrivals are (1: Poisson, as the closed-form model
    assumes; above 1: clustered, so queues form at loads a Poisson stream would not queue at).
    """

    mean_prompt_tokens: float
    mean_output_tokens: float
    prompt_quantiles: tuple[tuple[float, float], ...] = ()
    # c_a², the squared coefficient of variation of the arrivals (Poisson: 1), estimated from
    # the observed arrivals as the index of dispersion of their counts (see PoolSignals).
    arrival_scv: float = 1.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.arrival_scv) and self.arrival_scv >= 0):
            raise ValueError(f"arrival_scv must be finite and >= 0, got {self.arrival_scv}")
        probs = [q for q, _ in self.prompt_quantiles]
        tokens = [t for _, t in self.prompt_quantiles]
        if any(not 0.0 <= q <= 1.0 for q in probs) or probs != sorted(probs):
            raise ValueError("prompt quantile probabilities must be increasing within [0, 1]")
        if tokens != sorted(tokens) or any(not (math.isfinite(t) and t >= 0) for t in tokens):
            raise ValueError("prompt quantile token counts must be finite, >= 0, non-decreasing")

    def prompt_tokens_at(self, q: float) -> float:
        """The ``q`` quantile of prompt length, linear between the given points (the nearest
        point outside them; the mean without any)."""
        points = self.prompt_quantiles
        if not points:
            return self.mean_prompt_tokens
        if q <= points[0][0]:
            return points[0][1]
        for (q0, t0), (q1, t1) in pairwise(points):
            if q <= q1:
                return t0 if q1 <= q0 else t0 + (t1 - t0) * (q - q0) / (q1 - q0)
        return points[-1][1]


@dataclass(frozen=True, slots=True)
class SloTargets:
    """A service's latency objective.

    Percentile form (``request_attainment`` None, the default): TTFT at the 90th and ITL at the
    99th percentile. Per-request form: at least ``request_attainment`` of the requests have a
    TTFT within ``ttft_p90_s`` and a mean time per output token within ``itl_p99_s`` (the two
    fields then hold the per-request thresholds; the names stay so that the learnt corrections,
    which compare the observed percentiles with the predicted ones, keep one meaning).
    """

    ttft_p90_s: float
    itl_p99_s: float
    request_attainment: float | None = None

    def __post_init__(self) -> None:
        share = self.request_attainment
        if share is not None and not 0.0 < share < 1.0:
            raise ValueError(f"request_attainment must be within (0, 1), got {share}")


@dataclass(frozen=True, slots=True)
class Prediction:
    """A pool's steady state at one replica count and arrival rate.

    ``ttft_p90_s`` / ``itl_p99_s`` are None for a metric the role does not produce (a prefill
    pool has no ITL; a decode pool's share of TTFT is not its objective), ``inf`` when the pool
    cannot keep up. ``utilisation`` is the offered load relative to the most the replicas can
    sustain (1 = saturated, ``inf`` with no replicas), so ``rate / utilisation`` is the rate at
    which they saturate.
    """

    ttft_p90_s: float | None
    itl_p99_s: float | None
    utilisation: float


class CapacityModel(Protocol):
    """Predicts a pool's latencies; the scaler searches the replica count with it.

    Contract: pure and deterministic; ``replicas >= 1``; latencies and utilisation do not
    increase with more replicas and do not decrease with a higher rate (the scaler binary-searches
    on this). Implementations should be frozen dataclasses so snapshots compare by value.
    """

    def predict(
        self, role: PoolRole, replicas: int, arrival_rps: float, mix: LoadMix
    ) -> Prediction: ...

    def request_attainment(
        self,
        role: PoolRole,
        replicas: int,
        arrival_rps: float,
        mix: LoadMix,
        ttft_s: float,
        tpot_s: float,
    ) -> float:
        """Share of requests with TTFT <= ``ttft_s`` and mean TPOT <= ``tpot_s`` (non-decreasing
        in replicas, non-increasing in the rate)."""
        ...


@dataclass(frozen=True, slots=True)
class Corrections:
    """Observed-over-predicted latency ratios (Dynamo's SLA planner's correction factors):
    the prediction is multiplied by them before it is compared with the target."""

    ttft: float = 1.0
    itl: float = 1.0


def meets(
    role: PoolRole, prediction: Prediction, targets: SloTargets, corrections: Corrections
) -> bool:
    """Whether a prediction is stable (utilisation < 1) and within the role's objectives.

    A prefill pool answers for TTFT, a decode pool for ITL, a unified pool for both. NaN never
    meets anything.
    """
    if not prediction.utilisation < 1.0:
        return False
    checks: list[tuple[float | None, float, float]] = []
    if role is not PoolRole.DECODE:
        checks.append((prediction.ttft_p90_s, corrections.ttft, targets.ttft_p90_s))
    if role is not PoolRole.PREFILL:
        checks.append((prediction.itl_p99_s, corrections.itl, targets.itl_p99_s))
    for value, factor, target in checks:
        if value is None:
            raise ValueError(f"a {role.value} pool's prediction must include this latency")
        if not value * factor <= target:
            return False
    return True


def meets_at(
    model: CapacityModel,
    role: PoolRole,
    replicas: int,
    rate: float,
    mix: LoadMix,
    targets: SloTargets,
    corrections: Corrections,
) -> bool:
    """Whether ``replicas`` meet ``targets`` at ``rate``, in either form of the objective.

    Per-request form: stable, and the modelled share of requests within the thresholds is at
    least the target once the corrections have stretched the latencies (a latency ``f`` times
    the model's meets a threshold ``X`` when the model's meets ``X / f``).
    """
    prediction = model.predict(role, replicas, rate, mix)
    if targets.request_attainment is None:
        return meets(role, prediction, targets, corrections)
    if not prediction.utilisation < 1.0:
        return False
    share = model.request_attainment(
        role,
        replicas,
        rate,
        mix,
        targets.ttft_p90_s / corrections.ttft,
        targets.itl_p99_s / corrections.itl,
    )
    return share >= targets.request_attainment


def sustainable_rps(
    model: CapacityModel, role: PoolRole, replicas: int, mix: LoadMix, probe_rps: float
) -> float:
    """The rate at which ``replicas`` saturate (0 for none), read off the utilisation at a
    probe rate (``probe_rps`` > 0)."""
    if replicas <= 0:
        return 0.0
    u = model.predict(role, replicas, probe_rps, mix).utilisation
    if math.isnan(u):
        return 0.0  # an answer the model cannot give counts as no capacity
    return math.inf if u <= 0 else probe_rps / u
