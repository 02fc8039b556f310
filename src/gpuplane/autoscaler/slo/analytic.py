"""A closed-form capacity model: Erlang C for the prompt queue, Little's law for the decode batch,
and the decode stalls a prefill causes.

The twin fits this model's per-replica figures to the serving engine's step-time model
(``serving.engine_capacity``); the tests and quick what-if runs build it by hand.

- Prefill: a prompt of ``P`` tokens costs ``S(P) = overhead + P / prefill_tps + q·P²`` of a
  replica's time (prefill is compute-bound, so prompts run back to back; ``q`` is attention
  over the prompt). A router spreading requests
  over ``c`` replicas is approximated by an M/M/c queue with the mean service time; Erlang C
  gives the chance to wait and the waiting-time tail ``P(W > t) = C · exp(-(c/S - λ) t)``.
  Bursty arrivals (``LoadMix.arrival_scv`` = c_a² above 1) stretch the wait by Allen and
  Cunneen's G/G/c factor ``(c_a² + 1) / 2``.
  TTFT p90 ≈ that tail's 90th percentile plus the prefill of a 90th-percentile prompt (the sum
  of the two 90th percentiles: a little pessimistic, never optimistic), plus, in a unified
  pool, the decode step already running when the prompt arrives.
- Decode: a step over ``B`` running sequences takes ``base + per_kv_token · ctx · B`` (weights
  once, then each sequence's KV; ``ctx = prompt + output / 2`` is the mean resident context).
  (plus ``per_seq · B`` when each sequence also costs some work of its own, e.g. sampling).
  Little's law on one replica, ``B = λ/c · output · ITL``, fixes ``B``; the batch is capped by
  ``max_num_seqs`` and by the KV cache (``kv_capacity_tokens / ctx``). A decode pool's ITL p99
  is that step time times ``itl_tail_factor``.
- Unified pools time-share: prefill takes ``ρ_p`` of a replica, decode ``ρ_d``; prompt service
  stretches by ``1/(1-ρ_d)`` and decode steps by ``1/(1-ρ_p)``, and the pool is stable while
  ``ρ_p + ρ_d < 1`` (the same condition both ways round).
- Prefill stalls (unified pools): vLLM's scheduler puts the running decodes and the waiting
  prompts' tokens in one step (chunked prefill, at most ``max_num_batched_tokens`` per step), so
  every running sequence's next token waits for the prompt's prefill: that step's gap is
  ``T_d + S(chunk)``. Such steps are a fraction ``f = m / (m + plain)`` of all steps (``m``
  prompt chunks per second, ``plain`` decode-only steps per second). When ``f`` is above 1 %
  the 99th-percentile gap is a stalled step, the one of the ``1 - 0.01/f`` quantile prompt;
  this is why the ITL tail grows with the prompts each replica takes even far from
  saturation, and why adding replicas lowers it. Prompts that arrive together and share one
  step are not modelled (the stall is underestimated when prefill takes much of a replica).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from gpuplane.autoscaler.slo.capacity import LoadMix, PoolRole, Prediction
from gpuplane.autoscaler.slo.per_request import request_share
from gpuplane.autoscaler.slo.queueing import erlang_c

__all__ = ["AnalyticCapacity", "erlang_c"]

_TTFT_Q = 0.9
_ITL_TAIL = 0.01  # ITL is a 99th percentile


class CapacityFigures(Protocol):
    """A replica's figures as a serving engine fit gives them
    (``serving.engine_capacity.EngineCapacity``); read-only, named as the fields below."""

    @property
    def prefill_tokens_per_s(self) -> float: ...
    @property
    def decode_base_step_s(self) -> float: ...
    @property
    def decode_step_per_kv_token_s(self) -> float: ...
    @property
    def decode_step_per_seq_s(self) -> float: ...
    @property
    def max_num_seqs(self) -> int: ...
    @property
    def kv_capacity_tokens(self) -> float: ...
    @property
    def itl_tail_factor(self) -> float: ...
    @property
    def max_num_batched_tokens(self) -> int: ...
    @property
    def prefill_s_per_token_squared(self) -> float: ...


@dataclass(frozen=True, slots=True)
class AnalyticCapacity:
    """Per-replica figures of one engine configuration (model, GPUs, parallelism).

    ``decode_step_per_seq_s`` is what each running sequence adds to a decode step besides its
    KV reads. ``prefill_tokens_per_s`` is what a prompt's tokens add to a step's time (the marginal
    prefill throughput), ``prefill_s_per_token_squared`` the part that grows with the square of
    the prompt (attention over it); ``prefill_overhead_s`` is the fixed extra of a step that
    carries prefill. ``max_num_batched_tokens`` (vLLM's per-step token budget; None: a prompt is
    prefilled in one step whatever its length) caps how long one stall can be.
    """

    prefill_tokens_per_s: float
    decode_base_step_s: float
    decode_step_per_kv_token_s: float
    prefill_overhead_s: float = 0.0
    max_num_seqs: int = 256
    kv_capacity_tokens: float | None = None
    itl_tail_factor: float = 1.0
    max_num_batched_tokens: int | None = None
    prefill_s_per_token_squared: float = 0.0
    decode_step_per_seq_s: float = 0.0

    def __post_init__(self) -> None:
        if self.prefill_tokens_per_s <= 0 or self.decode_base_step_s <= 0:
            raise ValueError("prefill throughput and decode base step time must be > 0")
        if self.decode_step_per_kv_token_s < 0 or self.prefill_overhead_s < 0:
            raise ValueError("per-token step time and prefill overhead must be >= 0")
        if self.max_num_seqs < 1 or self.itl_tail_factor < 1:
            raise ValueError("max_num_seqs must be >= 1 and itl_tail_factor >= 1")
        if self.max_num_batched_tokens is not None and self.max_num_batched_tokens < 1:
            raise ValueError("max_num_batched_tokens must be >= 1")
        if self.prefill_s_per_token_squared < 0 or self.decode_step_per_seq_s < 0:
            raise ValueError("prefill_s_per_token_squared and decode_step_per_seq_s must be >= 0")

    @classmethod
    def from_figures(cls, f: CapacityFigures) -> AnalyticCapacity:
        """The model of a replica whose figures an engine fit read off its engine."""
        return cls(
            prefill_tokens_per_s=f.prefill_tokens_per_s,
            decode_base_step_s=f.decode_base_step_s,
            decode_step_per_kv_token_s=f.decode_step_per_kv_token_s,
            decode_step_per_seq_s=f.decode_step_per_seq_s,
            max_num_seqs=f.max_num_seqs,
            kv_capacity_tokens=f.kv_capacity_tokens,
            itl_tail_factor=f.itl_tail_factor,
            max_num_batched_tokens=f.max_num_batched_tokens,
            prefill_s_per_token_squared=f.prefill_s_per_token_squared,
        )

    def prefill_s(self, tokens: float) -> float:
        """Replica time a prefill of ``tokens`` takes (one chunk or a whole prompt)."""
        linear = self.prefill_overhead_s + tokens / self.prefill_tokens_per_s
        return linear + self.prefill_s_per_token_squared * tokens * tokens

    def prefill_service_s(self, mix: LoadMix) -> float:
        """The mean prompt's prefill time."""
        return self.prefill_s(mix.mean_prompt_tokens)

    def chunks_per_prompt(self, mix: LoadMix) -> float:
        budget = self.max_num_batched_tokens
        return 1.0 if budget is None else max(1.0, mix.mean_prompt_tokens / budget)

    def stall_tokens(self, mix: LoadMix, q: float) -> float:
        """Prefill tokens in a step carrying the ``q`` quantile prompt (at most the budget)."""
        tokens = mix.prompt_tokens_at(q)
        budget = self.max_num_batched_tokens
        return tokens if budget is None else min(tokens, float(budget))

    def context_tokens(self, mix: LoadMix) -> float:
        return mix.mean_prompt_tokens + mix.mean_output_tokens / 2.0

    def max_batch(self, mix: LoadMix) -> float:
        cap = float(self.max_num_seqs)
        ctx = self.context_tokens(mix)
        if self.kv_capacity_tokens is not None and ctx > 0:
            cap = min(cap, self.kv_capacity_tokens / ctx)
        return cap

    def per_sequence_s(self, mix: LoadMix) -> float:
        """What each running sequence adds to a decode step: its KV reads and its own work."""
        return self.decode_step_per_seq_s + self.decode_step_per_kv_token_s * self.context_tokens(
            mix
        )

    def step_s(self, batch: float, mix: LoadMix) -> float:
        return self.decode_base_step_s + self.per_sequence_s(mix) * batch

    def prefill_load(self, replicas: int, rate: float, mix: LoadMix) -> float:
        """ρ_p: the share of each replica's time prompts take."""
        return rate * self.prefill_service_s(mix) / replicas

    def decode_load(self, replicas: int, rate: float, mix: LoadMix) -> float:
        """ρ_d: output tokens asked per second over what a full batch generates."""
        full = self.max_batch(mix)
        if full <= 0:
            return math.inf if rate > 0 else 0.0
        peak_tokens_per_s = full / self.step_s(full, mix)
        return rate / replicas * mix.mean_output_tokens / peak_tokens_per_s

    def predict(
        self, role: PoolRole, replicas: int, arrival_rps: float, mix: LoadMix
    ) -> Prediction:
        if replicas < 1:
            raise ValueError(f"replicas must be >= 1, got {replicas}")
        rho_p = self.prefill_load(replicas, arrival_rps, mix) if role != PoolRole.DECODE else 0.0
        rho_d = self.decode_load(replicas, arrival_rps, mix) if role != PoolRole.PREFILL else 0.0
        utilisation = rho_p + rho_d
        ttft = None
        itl = None
        if role != PoolRole.DECODE:
            ttft = self._ttft_p90(role, replicas, arrival_rps, mix, rho_d)
        if role != PoolRole.PREFILL:
            itl = self._itl_p99(role, replicas, arrival_rps, mix, rho_p)
        return Prediction(ttft, itl, utilisation)

    def request_attainment(
        self,
        role: PoolRole,
        replicas: int,
        arrival_rps: float,
        mix: LoadMix,
        ttft_s: float,
        tpot_s: float,
    ) -> float:
        """Share of requests with TTFT <= ``ttft_s`` and mean TPOT <= ``tpot_s``."""
        return request_share(self, role, replicas, arrival_rps, mix, ttft_s, tpot_s)

    def _ttft_p90(
        self, role: PoolRole, replicas: int, rate: float, mix: LoadMix, rho_d: float
    ) -> float:
        if rho_d >= 1:
            return math.inf
        stretch = 1.0 / (1.0 - rho_d)
        service = self.prefill_service_s(mix) * stretch
        offered = rate * service
        if offered >= replicas:
            return math.inf
        wait_chance = erlang_c(replicas, offered)
        wait_p90 = 0.0
        if wait_chance > 1.0 - _TTFT_Q:
            wait_p90 = math.log(wait_chance / (1.0 - _TTFT_Q)) / (replicas / service - rate)
            # Allen-Cunneen's G/G/c correction: the wait scales by (c_a² + c_s²) / 2, with the
            # service's c_s² = 1 as in M/M/c; Poisson arrivals (c_a² = 1) leave it unchanged.
            wait_p90 *= (mix.arrival_scv + 1.0) / 2.0
        own = self.prefill_s(mix.prompt_tokens_at(_TTFT_Q)) * stretch
        in_flight = 0.0
        if role is PoolRole.UNIFIED:
            in_flight = self.decode_step(replicas, rate, mix, rho_p=0.0)
        return wait_p90 + own + in_flight

    def decode_step(self, replicas: int, rate: float, mix: LoadMix, rho_p: float) -> float:
        """A decode-only step at the Little's-law batch (``inf`` when decode cannot keep up)."""
        if rho_p >= 1:
            return math.inf
        stretch = 1.0 / (1.0 - rho_p)
        # B = r·out·stretch·(base + k·ctx·B), solved for B.
        tokens_rate = rate / replicas * mix.mean_output_tokens * stretch
        denom = 1.0 - tokens_rate * self.per_sequence_s(mix)
        if denom <= 0:
            return math.inf
        batch = tokens_rate * self.decode_base_step_s / denom
        if batch >= self.max_batch(mix) and rate > 0:
            return math.inf
        return self.step_s(batch, mix)

    def _itl_p99(
        self, role: PoolRole, replicas: int, rate: float, mix: LoadMix, rho_p: float
    ) -> float:
        step = self.decode_step(replicas, rate, mix, rho_p)
        if not math.isfinite(step):
            return math.inf
        if role is PoolRole.DECODE:
            return step * self.itl_tail_factor
        plain = step * (1.0 / (1.0 - rho_p)) * self.itl_tail_factor
        stalls_per_s = rate / replicas * self.chunks_per_prompt(mix)
        plain_per_s = max(0.0, 1.0 - rho_p - stalls_per_s * step) / step
        if stalls_per_s <= 0:
            return plain
        stalled = stalls_per_s / (stalls_per_s + plain_per_s)
        if stalled <= _ITL_TAIL:
            return plain
        q = 1.0 - _ITL_TAIL / stalled
        return max(plain, step + self.prefill_s(self.stall_tokens(mix, q)))
