"""What one scaling decision reads: per pool, its replicas by state, the signals of the recent
windows, its capacity model, its bounds and the scaler's memory of earlier decisions.

Signals are the vLLM V1 metrics a Prometheus query would return for the pool's pods
(``vllm:num_requests_waiting``, ``vllm:num_requests_running``, ``vllm:kv_cache_usage_perc``,
``rate(vllm:num_preemptions_total)``, ``histogram_quantile`` over
``vllm:time_to_first_token_seconds`` and ``vllm:inter_token_latency_seconds``) plus the arrival
rate the router counts. The caller builds snapshots from validated configuration; an
inconsistent snapshot is a programming error (ValueError), not a user mistake.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gpuplane.autoscaler.slo.capacity import CapacityModel, LoadMix, PoolRole, SloTargets


@dataclass(frozen=True, slots=True)
class LoadingReplica:
    """A pod created but not yet Ready: pulling the image, loading weights, compiling.

    ``expected_ready_s`` is when it should start serving (None: ``started_s`` plus the pool's
    cold-start estimate). An overdue replica is counted as arriving now.
    """

    started_s: float
    expected_ready_s: float | None = None

    def ready_at(self, cold_start_s: float) -> float:
        if self.expected_ready_s is not None:
            return self.expected_ready_s
        return self.started_s + cold_start_s


@dataclass(frozen=True, slots=True)
class ReplicaStates:
    """The pool's pods: Ready, still loading, and terminating (draining; not capacity, and
    no longer counted in ``spec.replicas``)."""

    ready: int
    loading: tuple[LoadingReplica, ...] = ()
    terminating: int = 0

    def __post_init__(self) -> None:
        if self.ready < 0 or self.terminating < 0:
            raise ValueError("replica counts must be >= 0")

    @property
    def current(self) -> int:
        """``spec.replicas`` as the Deployment has it: Ready plus loading."""
        return self.ready + len(self.loading)


@dataclass(frozen=True, slots=True)
class PoolSignals:
    """The pool's observed load.

    ``arrival_rps`` holds the arrival rate per ``step_s`` interval, oldest first, the last one
    ending now. Gauges are the pool's now: ``num_requests_waiting`` and ``num_requests_running``
    summed over its pods, ``kv_cache_usage`` their mean (0-1). ``preemptions_per_s``,
    ``ttft_p90_s``, ``itl_p99_s`` and the token means cover the last ``window_s`` (a latency is
    None when the window had no samples). ``prompt_quantiles`` are ``(probability, tokens)``
    points of the recent prompt lengths (see ``LoadMix``). ``arrival_scv`` is the burstiness
    of the recent arrivals, c_a² (1: Poisson; the index of dispersion of their counts over
    short bins, see ``LoadMix``). ``queue_time_p90_s`` is the 90th percentile of the time
    requests spent queued over the window (``vllm:request_queue_time_seconds``; None: no
    samples).
    """

    arrival_rps: tuple[float, ...]
    mean_prompt_tokens: float
    mean_output_tokens: float
    step_s: float = 15.0
    window_s: float = 60.0
    num_requests_waiting: float = 0.0
    num_requests_running: float = 0.0
    kv_cache_usage: float = 0.0
    preemptions_per_s: float = 0.0
    ttft_p90_s: float | None = None
    itl_p99_s: float | None = None
    prompt_quantiles: tuple[tuple[float, float], ...] = ()
    arrival_scv: float = 1.0
    queue_time_p90_s: float | None = None

    def __post_init__(self) -> None:
        if self.step_s <= 0 or self.window_s <= 0:
            raise ValueError("step_s and window_s must be > 0")
        if self.queue_time_p90_s is not None and not (
            math.isfinite(self.queue_time_p90_s) and self.queue_time_p90_s >= 0
        ):
            raise ValueError("queue_time_p90_s must be finite and >= 0")
        LoadMix(  # checks the token figures and arrival_scv
            self.mean_prompt_tokens,
            self.mean_output_tokens,
            self.prompt_quantiles,
            self.arrival_scv,
        )
        gauges = (
            *self.arrival_rps,
            self.mean_prompt_tokens,
            self.mean_output_tokens,
            self.num_requests_waiting,
            self.num_requests_running,
            self.kv_cache_usage,
            self.preemptions_per_s,
        )
        if not all(math.isfinite(v) and v >= 0 for v in gauges):
            raise ValueError("rates, token means and gauges must be finite and >= 0")

    @property
    def mix(self) -> LoadMix:
        return LoadMix(
            self.mean_prompt_tokens,
            self.mean_output_tokens,
            self.prompt_quantiles,
            self.arrival_scv,
        )

    def observed_rps(self) -> float:
        """Mean arrival rate over the last ``window_s`` (the latencies' window)."""
        if not self.arrival_rps:
            return 0.0
        n = max(1, min(len(self.arrival_rps), round(self.window_s / self.step_s)))
        return sum(self.arrival_rps[-n:]) / n

    def last_traffic_s(self, now_s: float) -> float | None:
        """When the pool last saw work: now if anything is queued or running, else the end of
        the last interval with arrivals."""
        if self.num_requests_waiting > 0 or self.num_requests_running > 0:
            return now_s
        for back, rate in enumerate(reversed(self.arrival_rps)):
            if rate > 0:
                return now_s - back * self.step_s
        return None


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The replica count a past decision found enough at slightly more load (for the
    scale-down stabilisation window)."""

    t_s: float
    replicas: int


@dataclass(frozen=True, slots=True)
class PoolMemory:
    """What the scaler keeps between decisions for a pool; returned in each decision.

    ``ttft_correction`` / ``itl_correction`` are the smoothed observed-over-predicted latency
    ratios. ``ready`` is the Ready count of the last decision and ``unsettled_s`` the last time
    the pool was not in a steady state (its Ready count changed, or a backlog was queued):
    latencies observed within one latency window of that say nothing about the model.
    """

    recommendations: tuple[Recommendation, ...] = ()
    last_traffic_s: float | None = None
    ttft_correction: float = 1.0
    itl_correction: float = 1.0
    ready: int | None = None
    unsettled_s: float | None = None


@dataclass(frozen=True, slots=True)
class PoolSnapshot:
    """One pool (a Deployment) of a served model. ``slo`` None means the settings' targets;
    ``cold_start_s`` is the estimate of pull + load + init until a new pod serves."""

    name: str
    role: PoolRole
    replicas: ReplicaStates
    signals: PoolSignals
    capacity: CapacityModel
    cold_start_s: float
    min_replicas: int
    max_replicas: int
    slo: SloTargets | None = None
    memory: PoolMemory = field(default_factory=PoolMemory)

    def __post_init__(self) -> None:
        if not 0 <= self.min_replicas <= self.max_replicas or self.max_replicas < 1:
            raise ValueError(
                f"pool {self.name}: need 0 <= min_replicas <= max_replicas and max >= 1, got "
                f"{self.min_replicas}..{self.max_replicas}"
            )
        if not (math.isfinite(self.cold_start_s) and self.cold_start_s >= 0):
            raise ValueError(f"pool {self.name}: cold_start_s must be finite and >= 0")


@dataclass(frozen=True, slots=True)
class SloSnapshot:
    """Every pool of one served model at time ``now_s`` (two pools under P/D, else one)."""

    now_s: float
    pools: tuple[PoolSnapshot, ...]

    def __post_init__(self) -> None:
        names = [p.name for p in self.pools]
        if len(set(names)) != len(names):
            raise ValueError(f"pool names must be unique, got {names}")
