"""The autoscaling benchmark's instruments on a twin run (bench/autoscale.py, the frontier and
the ``autoscaling`` sweep base): replica changes and samples, the oracle, per-minute attainment.

- :func:`record` wraps the Deployment controller's ``scale`` so every replica change is kept, and
  samples the spec and Ready replicas and the summed ``vllm:num_requests_waiting`` every 15 s.
- :func:`run_oracle` knows the future: per 60 s window of traffic it takes the actual arrival
  rate, request mix and burstiness (the index of dispersion of the window's counts in bins of
  the TTFT objective, as the SLO scaler measures it over five minutes), sizes the fewest
  replicas the service's capacity model says meet the objective (no forecast, no corrections,
  no margin; the percentile form or the per-request form, as the SLO scaler can be told), and at
  every 15 s holds the largest of those counts over the next cold start + 15 s. A replica must
  start one cold start before the window that needs it and one removed now cannot be back
  sooner, so any scaler meeting the modelled objective in every window holds at least this many
  replicas: under the model, a lower bound on GPU-hours.
- :func:`window_attainment`: the share of 1-minute windows whose TTFT-P90 (requests arriving in
  it; one not served is a miss) and ITL-P99 (the engines' histograms) meet the objective.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np

from gpuplane.autoscaler.promql.evaluator import evaluate
from gpuplane.autoscaler.slo.capacity import (
    CapacityModel,
    Corrections,
    LoadMix,
    PoolRole,
    SloTargets,
    meets_at,
)
from gpuplane.core.kernel import Priority
from gpuplane.serving.routing.outcome import Status
from gpuplane.twin.autoscaling.slo import arrival_dispersion
from gpuplane.twin.controllers.deployment import DeploymentController
from gpuplane.twin.serving.runtime import ServingRuntime
from gpuplane.twin.simulation import Simulation

WINDOW_S, SYNC_S, SAMPLE_S = 60.0, 15.0, 15.0
PROMPT_QS = (0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0)


@dataclass(frozen=True, slots=True)
class Bench:
    """What the instruments watch: one service, its Deployment, the traffic's time span."""

    service: str
    deployment_key: str  # namespace/name
    traffic_start_s: float
    traffic_s: float
    ttft_s: float
    itl_s: float
    min_replicas: int
    max_replicas: int


@dataclass(slots=True)
class Recorder:
    """Replica changes as they are written (t, old, new), and samples (t, spec, ready, queue)."""

    changes: list[tuple[float, int, int]] = field(default_factory=list)
    samples: list[tuple[float, int, int, float]] = field(default_factory=list)


def scalar(query: str, store: Any, t: float) -> float:
    samples = getattr(evaluate(query, store, t), "samples", ())
    value = float(samples[0].value) if samples else 0.0
    return value if math.isfinite(value) else math.nan


def record(sim: Simulation, bench: Bench, rec: Recorder, until_s: float) -> None:
    deployments = sim.component(DeploymentController)
    plain_scale = deployments.scale

    def scale(key: str, replicas: int, reason: str = "") -> None:
        state = sim.cluster.store.deployments.get(key)
        if state is not None and state.replicas != replicas:
            rec.changes.append((sim.cluster.now, state.replicas, replicas))
        plain_scale(key, replicas, reason)

    deployments.scale = scale  # type: ignore[method-assign]
    store, tsdb = sim.cluster.store, sim.cluster.tsdb
    waiting = f'sum(vllm:num_requests_waiting{{service="{bench.service}"}})'

    def sample() -> None:
        now = sim.cluster.now
        state = store.deployments[bench.deployment_key]
        serving = sim.component(ServingRuntime)
        ready = sum(1 for p, _ in serving.pods_of(bench.service) if p.conditions.get("Ready"))
        rec.samples.append((now, state.replicas, ready, scalar(waiting, tsdb, now)))
        if now + SAMPLE_S <= until_s:
            sim.cluster.loop.after(SAMPLE_S, sample, priority=Priority.METRICS, label="bench")

    sim.cluster.loop.schedule(0.0, sample, priority=Priority.METRICS, label="bench")


def oscillations(changes: list[tuple[float, int, int]]) -> int:
    """Direction changes of the replica count (up then down, or down then up)."""
    signs = [1 if new > old else -1 for _, old, new in changes]
    return sum(1 for a, b in pairwise(signs) if a != b)


def window_needs(
    bench: Bench,
    targets: SloTargets,
    arrivals: np.ndarray,
    prompts: np.ndarray,
    outputs: np.ndarray,
    capacity: CapacityModel,
) -> list[int]:
    """Per 60 s window of traffic, the fewest replicas the capacity model says meet ``targets``."""
    none = Corrections()
    needs = []
    start_s = bench.traffic_start_s
    for start in np.arange(start_s, start_s + bench.traffic_s, WINDOW_S):
        lo, hi = np.searchsorted(arrivals, [start, start + WINDOW_S])
        if hi <= lo:
            needs.append(bench.min_replicas)
            continue
        qs = np.quantile(prompts[lo:hi], PROMPT_QS)
        mix = LoadMix(
            float(prompts[lo:hi].mean()),
            float(outputs[lo:hi].mean()),
            tuple((q, float(v)) for q, v in zip(PROMPT_QS, qs, strict=True)),
            # the window's own burstiness, measured as the SLO scaler measures it
            arrival_dispersion(arrivals, start + WINDOW_S, bench.ttft_s, WINDOW_S),
        )
        rate = (hi - lo) / WINDOW_S
        role = PoolRole.UNIFIED
        n = next(
            (
                n
                for n in range(bench.min_replicas, bench.max_replicas + 1)
                if meets_at(capacity, role, n, rate, mix, targets, none)
            ),
            bench.max_replicas,
        )
        needs.append(n)
    return needs


def run_oracle(sim: Simulation, bench: Bench, targets: SloTargets, until_s: float) -> None:
    """Scale the benchmark's Deployment as the oracle would (see the module's text)."""
    serving = sim.component(ServingRuntime)
    deployments = sim.component(DeploymentController)
    plan: dict[str, Any] = {}
    key, start_s = bench.deployment_key, bench.traffic_start_s

    def tick() -> None:
        now = sim.cluster.now
        if "needs" not in plan:
            capacity = serving.capacity_model(bench.service)
            if capacity is None:
                sim.cluster.loop.after(SYNC_S, tick, priority=Priority.CONTROLLER, label="oracle")
                return
            svc = serving.services[bench.service]
            plan["needs"] = window_needs(
                bench, targets, svc.arrivals, svc.prompts, svc.outputs, capacity
            )
            plan["cold"] = serving.cold_start_estimate(bench.service)
        needs, reach = plan["needs"], plan["cold"] + SYNC_S
        first = max(0, int((now - start_s) // WINDOW_S))
        last = min(int((now + reach - start_s) // WINDOW_S), len(needs) - 1)
        desired = max([bench.min_replicas, *needs[first : last + 1]])
        if first < len(needs) and desired != sim.cluster.store.deployments[key].replicas:
            deployments.scale(key, desired, "oracle")
        if now + SYNC_S <= until_s:
            sim.cluster.loop.after(SYNC_S, tick, priority=Priority.CONTROLLER, label="oracle")

    sim.cluster.loop.schedule(0.0, tick, priority=Priority.CONTROLLER, label="oracle")


def window_attainment(sim: Simulation, bench: Bench) -> dict[str, float]:
    """Share of 60 s windows whose TTFT-P90 and ITL-P99 meet the objective."""
    svc = sim.component(ServingRuntime).services[bench.service]
    outcomes = svc.sim.result().outcomes
    arrival = np.array([o.arrival_s for o in outcomes])
    ttft = np.array(
        [
            o.ttft_s if o.status is Status.COMPLETED and o.ttft_s is not None else math.inf
            for o in outcomes
        ]
    )
    itl_q = (
        "histogram_quantile(0.99, sum by (le) "
        f'(increase(vllm:inter_token_latency_seconds_bucket{{service="{bench.service}"}}[1m])))'
    )
    met = {"ttft": 0, "itl": 0, "both": 0}
    starts = np.arange(bench.traffic_start_s, bench.traffic_start_s + bench.traffic_s, WINDOW_S)
    for start in starts:
        inside = (arrival >= start) & (arrival < start + WINDOW_S)
        t_ok = (
            not inside.any()
            or float(np.quantile(ttft[inside], 0.9, method="inverted_cdf")) <= bench.ttft_s
        )
        itl = scalar(itl_q, sim.cluster.tsdb, start + WINDOW_S)
        i_ok = not math.isfinite(itl) or itl <= bench.itl_s
        met["ttft"] += t_ok
        met["itl"] += i_ok
        met["both"] += t_ok and i_ok
    return {k: round(v / len(starts), 4) for k, v in met.items()}


@dataclass(frozen=True, slots=True)
class BenchRun:
    """One instrumented twin run: the simulation, its result and what the recorder saw."""

    sim: Simulation
    result: Any  # twin.simulation's RunResult
    rec: Recorder
    wall_s: float


def run_instrumented(
    sim: Simulation, bench: Bench, oracle: SloTargets | None, until_s: float
) -> BenchRun:
    """Run ``sim`` to ``until_s`` with the recorder (and the oracle sizing each minute, when
    ``oracle`` is given); ``wall_s`` is the run's own time (not reproducible)."""
    rec = Recorder()
    record(sim, bench, rec, until_s)
    if oracle is not None:
        run_oracle(sim, bench, oracle, until_s)
    started = time.perf_counter()
    result = sim.run(until_s)
    return BenchRun(sim, result, rec, time.perf_counter() - started)


def run_figures(run: BenchRun, bench: Bench) -> dict[str, float | int | None]:
    """The benchmark's figures of one run: GPU-hours (allocated, plus what terminating pods held
    while they drained), per-request and per-minute attainment, latencies, requests, scale
    events and replicas."""
    summary = run.result.summary
    assert summary.serving is not None
    svc = summary.serving.services[0]
    term = svc.termination
    windows = window_attainment(run.sim, bench)
    replicas = [r for _, r, _, _ in run.rec.samples]
    return {
        "gpu_hours": round(summary.pods.gpu_hours_allocated + term.gpu_hours, 4),
        "attainment": svc.slo_attainment,
        "windows_met": windows["both"],
        "windows_ttft_met": windows["ttft"],
        "windows_itl_met": windows["itl"],
        "ttft_p90_s": svc.latency_s.ttft_p90_s,
        "itl_p99_s": svc.latency_s.itl_p99_s,
        "arrived": svc.requests.arrived,
        "rejected": svc.requests.rejected,
        "aborted_at_kill": term.requests_aborted,
        "terminating_gpu_hours": round(term.gpu_hours, 4),
        "scale_events": len(run.rec.changes),
        "oscillations": oscillations(run.rec.changes),
        "mean_replicas": round(sum(replicas) / len(replicas), 3) if replicas else None,
        "max_replicas": max(replicas, default=None),
        "wall_s": round(run.wall_s, 3),
    }
