"""A closed-form capacity model: Erlang C for the prompt queue, Little's law for the decode batch.

The twin predicts latencies with the serving engine's step-time model; this stand-in needs only
a few per-replica figures and is what the tests and quick what-if runs use.

- Prefill: each replica serves one prompt at a time in ``S = overhead + prompt / prefill_tps``
  (prefill is compute-bound, so prompts run back to back). A router spreading requests over
  ``c`` replicas is approximated by an M/M/c queue; Erlang C gives the chance to wait and the
  waiting-time tail ``P(W > t) = C · exp(-(c/S - λ) t)``, so TTFT p90 ≈ that tail's 90th
  percentile plus ``S``.
- Decode: a step over ``B`` running sequences takes ``base + per_kv_token · ctx · B`` (weights
  once, then each sequence's KV; ``ctx = prompt + output / 2`` is the mean resident context).
  Little's law on one replica, ``B = λ/c · output · ITL``, fixes ``B``; the batch is capped by
  ``max_num_seqs`` and by the KV cache (``kv_capacity_tokens / ctx``). ITL p99 is the step time
  times ``itl_tail_factor``.
- Unified pools time-share: prefill takes ``ρ_p`` of a replica, decode ``ρ_d``; prompt service
  stretches by ``1/(1-ρ_d)`` and decode steps by ``1/(1-ρ_p)``, and the pool is stable while
  ``ρ_p + ρ_d < 1`` (the same condition both ways round).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuplane.autoscaler.slo.capacity import LoadMix, PoolRole, Prediction


def erlang_c(servers: int, offered: float) -> float:
    """Probability that an arrival waits in an M/M/c queue (``offered = λ·S`` in servers).

    Erlang B by its stable recurrence, then C from B; 1 when the queue is unstable.
    """
    if offered <= 0:
        return 0.0
    if offered >= servers:
        return 1.0
    b = 1.0
    for k in range(1, servers + 1):
        b = offered * b / (k + offered * b)
    return servers * b / (servers - offered * (1.0 - b))


@dataclass(frozen=True, slots=True)
class AnalyticCapacity:
    """Per-replica figures of one engine configuration (model, GPUs, parallelism)."""

    prefill_tokens_per_s: float
    decode_base_step_s: float
    decode_step_per_kv_token_s: float
    prefill_overhead_s: float = 0.0
    max_num_seqs: int = 256
    kv_capacity_tokens: float | None = None
    itl_tail_factor: float = 1.0

    def __post_init__(self) -> None:
        if self.prefill_tokens_per_s <= 0 or self.decode_base_step_s <= 0:
            raise ValueError("prefill throughput and decode base step time must be > 0")
        if self.decode_step_per_kv_token_s < 0 or self.prefill_overhead_s < 0:
            raise ValueError("per-token step time and prefill overhead must be >= 0")
        if self.max_num_seqs < 1 or self.itl_tail_factor < 1:
            raise ValueError("max_num_seqs must be >= 1 and itl_tail_factor >= 1")

    def prefill_service_s(self, mix: LoadMix) -> float:
        return self.prefill_overhead_s + mix.mean_prompt_tokens / self.prefill_tokens_per_s

    def context_tokens(self, mix: LoadMix) -> float:
        return mix.mean_prompt_tokens + mix.mean_output_tokens / 2.0

    def max_batch(self, mix: LoadMix) -> float:
        cap = float(self.max_num_seqs)
        ctx = self.context_tokens(mix)
        if self.kv_capacity_tokens is not None and ctx > 0:
            cap = min(cap, self.kv_capacity_tokens / ctx)
        return cap

    def step_s(self, batch: float, mix: LoadMix) -> float:
        return self.decode_base_step_s + self.decode_step_per_kv_token_s * (
            self.context_tokens(mix) * batch
        )

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
            ttft = self._ttft_p90(replicas, arrival_rps, mix, rho_d)
        if role != PoolRole.PREFILL:
            itl = self._itl_p99(replicas, arrival_rps, mix, rho_p)
        return Prediction(ttft, itl, utilisation)

    def _ttft_p90(self, replicas: int, rate: float, mix: LoadMix, rho_d: float) -> float:
        if rho_d >= 1:
            return math.inf
        service = self.prefill_service_s(mix) / (1.0 - rho_d)
        offered = rate * service
        if offered >= replicas:
            return math.inf
        wait_chance = erlang_c(replicas, offered)
        wait_p90 = 0.0
        if wait_chance > 0.1:
            wait_p90 = math.log(wait_chance / 0.1) / (replicas / service - rate)
        return wait_p90 + service

    def _itl_p99(self, replicas: int, rate: float, mix: LoadMix, rho_p: float) -> float:
        if rho_p >= 1:
            return math.inf
        stretch = 1.0 / (1.0 - rho_p)
        # B = r·out·stretch·(base + k·ctx·B), solved for B.
        tokens_rate = rate / replicas * mix.mean_output_tokens * stretch
        denom = 1.0 - tokens_rate * self.decode_step_per_kv_token_s * self.context_tokens(mix)
        if denom <= 0:
            return math.inf
        batch = tokens_rate * self.decode_base_step_s / denom
        if batch >= self.max_batch(mix) and rate > 0:
            return math.inf
        return self.step_s(batch, mix) * stretch * self.itl_tail_factor
