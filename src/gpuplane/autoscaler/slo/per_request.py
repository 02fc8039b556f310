"""Per-request attainment under the closed-form capacity model: the share of requests whose TTFT
is within ``X`` and whose mean time per output token (TPOT) is within ``Y``.

This is the objective the twin's ``slo_attainment`` counts (and the one most SLO contracts
state: "95 % of requests answer within 2 s and stream at least 5 tokens/s"), rather than a
percentile of each minute. It comes from the same terms as :mod:`analytic`'s percentiles:

- **TTFT** of a request = its wait in the prompt queue + its own prefill (stretched by the decode
  share of the replica) + the decode step running when it arrives (unified pools). The wait is
  M/M/c's ``P(W > t) = C · exp(-(c/S - λ) t)``, stretched by Allen and Cunneen's G/G/c factor
  ``(c_a² + 1) / 2`` for bursty arrivals. The prompt is taken at ``PROMPT_POINTS`` evenly spaced
  quantiles of the prompt-length distribution, so a long prompt's own prefill leaves it less of
  the budget to wait: ``P(TTFT <= X) = mean_q P(W <= X - prefill(P_q) - step)``.
- **Mean TPOT** of a request = (end - first token) / (output - 1): ``n = output - 1`` decode
  steps at the Little's-law batch, plus every prefill stall that lands within them (vLLM puts a
  waiting prompt's chunk into the running batch's step, so each running sequence waits for it).
  Stalls arrive at ``λ/c`` prompt chunks per second per replica, so a request sees
  ``K ~ Poisson(λ/c · chunks · n · step)`` of them, each as long as the mean chunk's prefill
  ``s`` (averaged over the prompt-length quantiles, each capped at the step budget):
  ``TPOT = step + K·s/n`` and ``P(TPOT <= Y) = P(K <= (Y - step)·n/s)``. A short answer
  is hurt by one stall, a long one averages it out: this is why the per-request objective is
  cheaper than an ITL p99 of the same figure. The mix carries only the mean output length, so
  output lengths are taken as exponential with that mean (``n - 1`` at ``OUTPUT_POINTS``
  quantiles): the code trace's answers (mean 28 tokens, median 13) are mostly short.
- **Clumps.** Bursty arrivals (``c_a²`` above 1, measured as the index of dispersion of 2 s
  counts) are read as a compound Poisson stream of geometric clumps of mean ``m = (c_a² + 1)/2``
  (its index of dispersion is ``2m - 1``). A request finds a geometric number of its own clump
  ahead of it, served ``c`` at a time, so it also waits for its clump:
  ``P(clump wait <= t) = 1 - (1 - 1/m)^(floor(c·t/S) + 1)``, multiplied into the queue's share
  (Poisson arrivals: m = 1, no clump). Allen-Cunneen's stretch of the steady-state wait does not
  see this: at the replica counts a burst of 30 requests in a few seconds needs, the chance to
  queue in steady state is small.

The two are taken as independent: ``attainment = P(TTFT ok) · P(TPOT ok)``.
"""

from __future__ import annotations

import math
from typing import Protocol

from gpuplane.autoscaler.slo.capacity import LoadMix, PoolRole
from gpuplane.autoscaler.slo.queueing import erlang_c

PROMPT_POINTS = 20  # prompt-length quantiles at (i + 0.5) / 20
OUTPUT_POINTS = 20  # output-length quantiles of the exponential with the mix's mean


class StepModel(Protocol):
    """The per-replica terms of the closed-form model (``analytic.StepModel``)."""

    @property
    def max_num_batched_tokens(self) -> int | None: ...

    def prefill_s(self, tokens: float) -> float: ...

    def prefill_service_s(self, mix: LoadMix) -> float: ...

    def chunks_per_prompt(self, mix: LoadMix) -> float: ...

    def prefill_load(self, replicas: int, rate: float, mix: LoadMix) -> float: ...

    def decode_load(self, replicas: int, rate: float, mix: LoadMix) -> float: ...

    def decode_step(self, replicas: int, rate: float, mix: LoadMix, rho_p: float) -> float: ...


def poisson_cdf(k: float, mean: float) -> float:
    """``P(K <= k)`` for ``K ~ Poisson(mean)`` (0 for ``k < 0``), summed term by term."""
    if k < 0:
        return 0.0
    if mean <= 0:
        return 1.0
    top = math.floor(k)
    if top > mean + 12.0 * math.sqrt(mean) + 12.0:
        return 1.0  # the remaining tail is below 1e-12
    term = math.exp(-mean)
    total = term
    for i in range(1, top + 1):
        term *= mean / i
        total += term
    return min(1.0, total)


def ttft_share(
    model: StepModel, role: PoolRole, replicas: int, rate: float, mix: LoadMix, ttft_s: float
) -> float:
    """Share of requests whose TTFT is within ``ttft_s``."""
    rho_d = model.decode_load(replicas, rate, mix) if role is PoolRole.UNIFIED else 0.0
    if rho_d >= 1:
        return 0.0
    stretch = 1.0 / (1.0 - rho_d)
    service = model.prefill_service_s(mix) * stretch
    offered = rate * service
    if offered >= replicas:
        return 0.0
    wait_chance = erlang_c(replicas, offered)
    decay = (replicas / service - rate) / ((mix.arrival_scv + 1.0) / 2.0)
    in_flight = 0.0
    if role is PoolRole.UNIFIED:
        in_flight = model.decode_step(replicas, rate, mix, 0.0)
        if not math.isfinite(in_flight):
            return 0.0
    # Clumps: a compound-Poisson stream with geometric clumps of mean m has an index of
    # dispersion 2m - 1, so m = (c_a² + 1) / 2; a request finds a geometric number of its
    # clump ahead of it (mean m - 1), served ``replicas`` at a time.
    ahead = 1.0 - 2.0 / (mix.arrival_scv + 1.0) if mix.arrival_scv > 1.0 else 0.0
    total = 0.0
    for i in range(PROMPT_POINTS):
        own = model.prefill_s(mix.prompt_tokens_at((i + 0.5) / PROMPT_POINTS)) * stretch
        budget = ttft_s - own - in_flight
        if budget >= 0:
            clump = 1.0 - ahead ** (math.floor(replicas * budget / service) + 1)
            total += (1.0 - wait_chance * math.exp(-decay * budget)) * clump
    return total / PROMPT_POINTS


def tpot_share(
    model: StepModel, role: PoolRole, replicas: int, rate: float, mix: LoadMix, tpot_s: float
) -> float:
    """Share of requests whose mean time per output token is within ``tpot_s``."""
    rho_p = model.prefill_load(replicas, rate, mix) if role is PoolRole.UNIFIED else 0.0
    step = model.decode_step(replicas, rate, mix, rho_p)
    if not math.isfinite(step) or step > tpot_s:
        return 0.0
    if role is not PoolRole.UNIFIED:
        return 1.0
    budget = float(model.max_num_batched_tokens or math.inf)
    stall_s = (
        sum(  # the mean stall over the prompt-length quantiles (prefill is convex)
            model.prefill_s(min(budget, mix.prompt_tokens_at((i + 0.5) / PROMPT_POINTS)))
            for i in range(PROMPT_POINTS)
        )
        / PROMPT_POINTS
    )
    if stall_s <= 0:
        return 1.0
    per_gap = rate / replicas * model.chunks_per_prompt(mix) * step  # stalls per decode step
    total = 0.0
    for i in range(OUTPUT_POINTS):
        gaps = (mix.mean_output_tokens - 1.0) * -math.log(1.0 - (i + 0.5) / OUTPUT_POINTS)
        if gaps < 1.0:
            total += 1.0  # one output token: no time per output token to miss
        else:
            total += poisson_cdf((tpot_s - step) * gaps / stall_s, per_gap * gaps)
    return total / OUTPUT_POINTS


def request_share(
    model: StepModel,
    role: PoolRole,
    replicas: int,
    rate: float,
    mix: LoadMix,
    ttft_s: float,
    tpot_s: float,
) -> float:
    """Share of requests meeting both (a prefill pool answers for TTFT, a decode pool for TPOT)."""
    if replicas < 1:
        raise ValueError(f"replicas must be >= 1, got {replicas}")
    if rate <= 0:
        return 1.0
    share = 1.0
    if role is not PoolRole.DECODE:
        share *= ttft_share(model, role, replicas, rate, mix, ttft_s)
    if role is not PoolRole.PREFILL:
        share *= tpot_share(model, role, replicas, rate, mix, tpot_s)
    return share
