"""gpuplane's SLO-aware scaler in the twin: the pure ``autoscaler.slo.decide`` fed every sync
period with what a real deployment of it would read.

- Replicas: Ready pods, pods still loading (with the ready time their engine reported), and
  pods not yet started (loading from their creation, at the cold-start estimate).
- Signals: the router's arrival counts per sync period (the twin's request stream), the token
  means and prompt-length quantiles of recent requests (what ``histogram_quantile`` over
  ``vllm:request_prompt_tokens`` gives a live scaler, without the buckets' coarseness), and
  PromQL over the cluster's series store for the engines' gauges
  (``vllm:num_requests_waiting``/``running``, ``vllm:kv_cache_usage_perc``, preemption rate,
  TTFT p90 and ITL p99 from the histograms).
- Capacity: ``serving.engine_capacity`` fits the analytic capacity model's per-replica figures to
  the calibrated step-time model and memory plan of the service's engines.

Each sync's inputs and decision are logged for autoscaling_timeseries.csv (``series``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from gpuplane.autoscaler.promql.evaluator import evaluate
from gpuplane.autoscaler.slo.capacity import CapacityModel, PoolRole, SloTargets
from gpuplane.autoscaler.slo.scaler import decide
from gpuplane.autoscaler.slo.snapshot import (
    LoadingReplica,
    PoolMemory,
    PoolSignals,
    PoolSnapshot,
    ReplicaStates,
    SloSnapshot,
)
from gpuplane.core.kernel import Priority
from gpuplane.twin.autoscaling.summary import SloScalerSummary, SloScalingSummary
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.component import Component
from gpuplane.twin.controllers.deployment import DeploymentController
from gpuplane.twin.scenario.serving_spec import SloScalerSpec
from gpuplane.twin.series import SeriesLog, SeriesRow
from gpuplane.twin.serving.runtime import ServingRuntime

HISTORY_STEPS = 40  # arrival-rate history the forecast sees (10 minutes at 15 s)
MIX_WINDOW_S = 300.0  # the request mix is read over the last five minutes
PROMPT_QUANTILES = (0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0)
DISPERSION_WINDOW_S = 60.0  # counts vary around each minute's own mean (the forecast's scale)
MIN_DISPERSION_ARRIVALS = 50  # fewer: too noisy to tell from Poisson


@dataclass(slots=True)
class _Scaler:
    spec: SloScalerSpec
    capacity: CapacityModel | None = None
    memory: PoolMemory = field(default_factory=PoolMemory)
    scale_events: int = 0
    max_seen: int = 0


class SloScaling(Component):
    def __init__(
        self,
        cluster: Cluster,
        deployments: DeploymentController,
        serving: ServingRuntime,
        specs: tuple[SloScalerSpec, ...],
    ) -> None:
        self.c = cluster
        self.deployments = deployments
        self.serving = serving
        self.scalers = [_Scaler(s) for s in specs]
        self.log = SeriesLog()

    def start(self, until_s: float) -> None:
        self.until_s = until_s
        for s in self.scalers:
            self._arm(s)

    def _arm(self, s: _Scaler) -> None:
        period = s.spec.settings.sync_period_s
        if self.c.now + period <= self.until_s:
            self.c.loop.after(
                period, lambda: self._sync(s), priority=Priority.CONTROLLER, label="slo-scaler"
            )

    def _sync(self, s: _Scaler) -> None:
        self._arm(s)
        svc = self.serving.services[s.spec.service]
        spec = svc.spec
        key = f"{spec.namespace}/{spec.deployment}"
        if s.capacity is None:
            s.capacity = self.serving.capacity_model(spec.name)
            if s.capacity is None:
                return  # no engine built yet: nothing to size from
        pool = PoolSnapshot(
            name=spec.deployment,
            role=PoolRole.UNIFIED,
            replicas=self._replicas(spec.name),
            signals=self._signals(spec.name, s.spec.settings.sync_period_s),
            capacity=s.capacity,
            cold_start_s=self.serving.cold_start_estimate(spec.name),
            min_replicas=s.spec.min_replicas,
            max_replicas=s.spec.max_replicas,
            slo=SloTargets(spec.slo_ttft_s, spec.slo_itl_s),
            memory=s.memory,
        )
        decision = decide(SloSnapshot(self.c.now, (pool,)), s.spec.settings).pools[0]
        s.memory = decision.memory
        self._log_sync(spec.name, pool, decision.current_replicas, decision.desired_replicas)
        state = self.c.store.deployments.get(key)
        if state is not None and decision.desired_replicas != state.replicas:
            self.deployments.scale(key, decision.desired_replicas, f"SLO scaler: {decision.reason}")
            s.scale_events += 1
            s.max_seen = max(s.max_seen, decision.desired_replicas)
            self.c.count("autoscaler_scale_events")

    def _replicas(self, service: str) -> ReplicaStates:
        ready, loading = 0, []
        for pod, ready_s in self.serving.pods_of(service):
            if pod.conditions.get("Ready"):
                ready += 1
            else:
                start = pod.started_s if pod.started_s is not None else pod.created_s
                loading.append(LoadingReplica(start, ready_s))
        return ReplicaStates(ready, tuple(loading))

    def _signals(self, service: str, step_s: float) -> PoolSignals:
        now = self.c.now
        arrivals, prompt, output = self.serving.arrival_history(service, now, step_s, HISTORY_STEPS)
        sel = f'{{service="{service}"}}'
        store = self.c.tsdb

        def scalar(query: str) -> float | None:
            value = evaluate(query, store, now)
            samples = getattr(value, "samples", ())
            if not samples:
                return None
            x = float(samples[0].value)
            return x if math.isfinite(x) else None

        ttft = scalar(
            "histogram_quantile(0.9, sum by (le) "
            f"(rate(vllm:time_to_first_token_seconds_bucket{sel}[1m])))"
        )
        itl = scalar(
            "histogram_quantile(0.99, sum by (le) "
            f"(rate(vllm:inter_token_latency_seconds_bucket{sel}[1m])))"
        )
        queued = scalar(
            "histogram_quantile(0.9, sum by (le) "
            f"(rate(vllm:request_queue_time_seconds_bucket{sel}[1m])))"
        )
        return PoolSignals(
            arrival_rps=arrivals,
            mean_prompt_tokens=prompt,
            mean_output_tokens=output,
            step_s=step_s,
            num_requests_waiting=scalar(f"sum(vllm:num_requests_waiting{sel})") or 0.0,
            num_requests_running=scalar(f"sum(vllm:num_requests_running{sel})") or 0.0,
            kv_cache_usage=min(scalar(f"avg(vllm:kv_cache_usage_perc{sel})") or 0.0, 1.0),
            preemptions_per_s=scalar(f"sum(rate(vllm:num_preemptions_total{sel}[1m]))") or 0.0,
            ttft_p90_s=ttft,
            itl_p99_s=itl,
            prompt_quantiles=self._prompt_quantiles(service, now),
            queue_time_p90_s=queued,
            arrival_scv=arrival_dispersion(
                self.serving.request_stream(service)[0],
                now,
                self.serving.services[service].spec.slo_ttft_s,
            ),
        )

    def _prompt_quantiles(self, service: str, now: float) -> tuple[tuple[float, float], ...]:
        arrivals, prompts, _ = self.serving.request_stream(service)
        return prompt_quantiles(arrivals, prompts, now)

    def _log_sync(self, service: str, pool: PoolSnapshot, current: int, desired: int) -> None:
        now, entity = self.c.now, f"SLO scaler {service}"
        sig = pool.signals
        seen: list[tuple[str, float | None]] = [
            ("current_replicas", float(current)),
            ("desired_replicas", float(desired)),
            ("request_rate_rps", sig.arrival_rps[-1] if sig.arrival_rps else None),
            ("queue_length", sig.num_requests_waiting),
            ("trigger.ttft_p90_s.value", sig.ttft_p90_s),
            ("trigger.ttft_p90_s.threshold", pool.slo.ttft_p90_s if pool.slo else None),
            ("trigger.itl_p99_s.value", sig.itl_p99_s),
            ("trigger.itl_p99_s.threshold", pool.slo.itl_p99_s if pool.slo else None),
        ]
        for metric, value in seen:
            if value is not None:
                self.log.record(now, entity, metric, float(value))

    def series(self, grid: Sequence[float]) -> dict[str, list[SeriesRow]]:
        return {"autoscaling_timeseries.csv": self.log.on_grid(grid)}

    def summary(self) -> SloScalingSummary:
        return SloScalingSummary(
            tuple(
                SloScalerSummary(
                    service=s.spec.service,
                    scale_events=s.scale_events,
                    max_replicas=s.max_seen,
                    ttft_correction=round(s.memory.ttft_correction, 3),
                    itl_correction=round(s.memory.itl_correction, 3),
                )
                for s in self.scalers
            )
        )


def prompt_quantiles(
    arrivals: np.ndarray, prompts: np.ndarray, now: float
) -> tuple[tuple[float, float], ...]:
    """Prompt-length quantiles of the requests that arrived in ``(now - MIX_WINDOW_S, now]``
    (none without requests: the capacity model then takes every prompt at the mean)."""
    lo, hi = np.searchsorted(arrivals, [now - MIX_WINDOW_S, now], side="right")
    if hi <= lo:
        return ()
    values = np.quantile(prompts[lo:hi], PROMPT_QUANTILES)
    return tuple((q, float(v)) for q, v in zip(PROMPT_QUANTILES, values, strict=True))


def arrival_dispersion(
    arrivals: np.ndarray, now: float, bin_s: float, span_s: float = MIX_WINDOW_S
) -> float:
    """The arrivals' burstiness over ``(now - span_s, now]``: the index of dispersion of their
    counts in bins of ``bin_s`` (the TTFT budget: a burst shorter than it queues, a longer one
    is a rate change), each bin taken against the mean of its own minute so that the minute-to-
    minute changes the rate forecast follows do not count. A Poisson stream gives 1; an
    estimate of c_a² for the capacity model's G/G/c correction. 1 with too few arrivals.
    """
    per_window = max(2, int(DISPERSION_WINDOW_S // bin_s))
    windows = max(1, int(span_s // (per_window * bin_s)))
    edges = now - bin_s * np.arange(windows * per_window, -1, -1)
    counts = np.diff(np.searchsorted(arrivals, edges, side="right")).astype(np.float64)
    total = float(counts.sum())
    if total < MIN_DISPERSION_ARRIVALS:
        return 1.0
    grid = counts.reshape(windows, per_window)
    spread = float(((grid - grid.mean(axis=1, keepdims=True)) ** 2).sum())
    variance = spread / (counts.size - windows)  # pooled within-minute variance
    return variance / (total / counts.size)
