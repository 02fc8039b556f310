"""Builders for the SLO-aware scaler's tests (no tests here): a capacity model, pools,
snapshots, and a small closed loop that applies decisions with a cold start."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from gpuplane.autoscaler.slo.analytic import AnalyticCapacity
from gpuplane.autoscaler.slo.capacity import CapacityModel, Corrections, LoadMix, PoolRole, meets
from gpuplane.autoscaler.slo.decision import PoolDecision
from gpuplane.autoscaler.slo.need import smallest_meeting
from gpuplane.autoscaler.slo.scaler import decide
from gpuplane.autoscaler.slo.settings import SloScalerSettings
from gpuplane.autoscaler.slo.snapshot import (
    LoadingReplica,
    PoolMemory,
    PoolSignals,
    PoolSnapshot,
    ReplicaStates,
    SloSnapshot,
)

NOW = 100_000.0
STEP = 15.0
SETTINGS = SloScalerSettings()

# A replica prefills 2500 tokens/s (0.4 s for a 1000-token prompt, 2.5 req/s at saturation) in
# chunks of at most 256 tokens (a decode step stalled by a chunk takes ~0.11 s), and decodes with
# 10 ms of weight reads per step plus 50 ns per resident KV token.
CAPACITY = AnalyticCapacity(
    prefill_tokens_per_s=2500.0,
    decode_base_step_s=0.010,
    decode_step_per_kv_token_s=5e-8,
    kv_capacity_tokens=300_000.0,
    max_num_batched_tokens=256,
)


def flat(rate: float, n: int = 40) -> tuple[float, ...]:
    return (rate,) * n


def make_pool(
    *,
    name: str = "llm",
    role: PoolRole = PoolRole.UNIFIED,
    ready: int = 2,
    loading: tuple[LoadingReplica, ...] = (),
    rates: tuple[float, ...] = flat(4.0),
    cold_start_s: float = 180.0,
    min_replicas: int = 1,
    max_replicas: int = 20,
    memory: PoolMemory | None = None,
    capacity: CapacityModel = CAPACITY,
    prompt: float = 1000.0,
    output: float = 200.0,
    **signals: Any,
) -> PoolSnapshot:
    return PoolSnapshot(
        name=name,
        role=role,
        replicas=ReplicaStates(ready, loading),
        signals=PoolSignals(rates, prompt, output, step_s=STEP, **signals),
        capacity=capacity,
        cold_start_s=cold_start_s,
        min_replicas=min_replicas,
        max_replicas=max_replicas,
        memory=memory if memory is not None else PoolMemory(),
    )


def decide_one(
    pool: PoolSnapshot, settings: SloScalerSettings = SETTINGS, now: float = NOW
) -> PoolDecision:
    return decide(SloSnapshot(now, (pool,)), settings).pools[0]


def learn(
    pool: PoolSnapshot, times: int = 40, settings: SloScalerSettings = SETTINGS
) -> PoolDecision:
    """Decide ``times`` times on the same signals, the memory carried over (each decision
    15 s later): the corrections converge to what these latencies say."""
    d = decide_one(pool, settings)
    for i in range(1, times):
        d = decide_one(replace(pool, memory=d.memory), settings, NOW + i * STEP)
    return d


def correction_for(observed: float, predicted: float, target: float) -> float:
    """The ratio a steady pool converges to: observed over predicted, clamped, and trusted in
    proportion to how close to the target the pool runs."""
    raw = min(SETTINGS.correction_max, max(SETTINGS.correction_min, observed / predicted))
    return 1.0 + (raw - 1.0) * min(1.0, max(observed, predicted) / target)


def needed_for(rate: float, pool: PoolSnapshot, settings: SloScalerSettings = SETTINGS) -> int:
    """The fewest replicas the capacity model says meet the SLO at ``rate`` (no forecast)."""
    return smallest_meeting(pool, rate, settings.targets(), Corrections())[0]


@dataclass
class Loop:
    """A pool driven tick by tick: decisions applied, new pods ready after the cold start."""

    rate_at: Callable[[float], float]
    ready: int = 2
    cold_start_s: float = 180.0
    min_replicas: int = 1
    max_replicas: int = 20
    settings: SloScalerSettings = SETTINGS
    history_len: int = 40
    t: float = NOW
    loading: list[LoadingReplica] = field(default_factory=list)
    memory: PoolMemory = field(default_factory=PoolMemory)
    rates: list[float] = field(default_factory=list)
    decisions: list[PoolDecision] = field(default_factory=list)
    ready_history: list[int] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # The metrics exist before the scaler starts: begin with a full history.
        back = range(self.history_len - 1, -1, -1)
        self.rates = [self.rate_at(self.t - k * STEP) for k in back]

    def tick(self) -> PoolDecision:
        self.t += STEP
        self.rates.append(self.rate_at(self.t))
        arrived = [r for r in self.loading if r.ready_at(self.cold_start_s) <= self.t]
        self.ready += len(arrived)
        self.loading = [r for r in self.loading if r not in arrived]
        self.ready_history.append(self.ready)
        pool = make_pool(
            ready=self.ready,
            loading=tuple(self.loading),
            rates=tuple(self.rates[-self.history_len :]),
            cold_start_s=self.cold_start_s,
            min_replicas=self.min_replicas,
            max_replicas=self.max_replicas,
            memory=self.memory,
            **self.extra,
        )
        d = decide_one(pool, self.settings, self.t)
        self._apply(d.desired_replicas - d.current_replicas)
        self.memory = d.memory
        self.decisions.append(d)
        return d

    def _apply(self, change: int) -> None:
        for _ in range(change):
            self.loading.append(LoadingReplica(self.t))
        for _ in range(-change):
            if self.loading:
                self.loading.pop()
            else:
                self.ready -= 1

    def run(self, seconds: float) -> list[PoolDecision]:
        out = [self.tick() for _ in range(round(seconds / STEP))]
        return out

    def slo_misses(self, role: PoolRole = PoolRole.UNIFIED) -> int:
        """Ticks at which the Ready replicas could not meet the SLO at the actual rate."""
        mix = LoadMix(1000.0, 200.0)
        targets, fixes = self.settings.targets(), Corrections()
        misses = 0
        rates = self.rates[self.history_len :]
        for ready, rate in zip(self.ready_history, rates, strict=True):
            if ready == 0:
                misses += rate > 0
            elif not meets(role, CAPACITY.predict(role, ready, rate, mix), targets, fixes):
                misses += 1
        return misses

    def changes(self) -> list[int]:
        """Every rescale as a signed change."""
        return [d.desired_replicas - d.current_replicas for d in self.decisions if d.rescale]
