"""How many replicas a pool needs for the forecast load: the terms behind one decision.

- **SLO**: the fewest replicas whose predicted TTFT p90 (prefill, unified) and ITL p99 (decode,
  unified), corrected by what was observed, meet the targets at the forecast rate, and whose
  utilisation stays below 1. With the per-request objective (``objective: per_request``): the
  fewest replicas at which the modelled share of requests with TTFT and mean TPOT within the
  thresholds reaches ``request_attainment`` (``per_request.py``).
- **Backlog** (prefill, unified): the queue projected to the moment a replica started now
  serves (it grows while arrivals exceed what the Ready and arriving replicas sustain, drains
  otherwise). What one TTFT budget of arrivals explains (``rate × ttft``, Little's law) is
  normal; the rest is to be drained within ``backlog_drain_s`` on top of the forecast rate.
  With ``queue_time_budget`` set, the queue time requests reported over the last minute counts
  too: waiting beyond the budget, times the arrival rate, is a backlog (Little's law) whether
  or not the gauge caught the queue at the decision.
- **KV** (decode, unified): the KV cache the forecast load would fill, ``usage × ready``
  scaled by forecast over observed rate (a decode pool's waiting sequences wait for KV and need
  as much again per sequence), kept at ``kv_usage_target``. Preemptions mean the cache already
  overflowed and the usage gauge is saturated, so ask for ``preemption_step_fraction`` more.

Observed latencies correct the model the way Dynamo's SLA planner does: the ratio of the
observed to the predicted latency at the current replicas and rate (clamped) multiplies every
prediction, so unmodelled effects (burstiness, prefix-cache hits, interference) feed back into
the count. Unlike a raw ratio, it is learnt only in steady state, shrunk toward 1 when the pool
runs far below the target, and smoothed across decisions (see :func:`corrections`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuplane.autoscaler.slo.capacity import (
    Corrections,
    PoolRole,
    SloTargets,
    meets_at,
    sustainable_rps,
)
from gpuplane.autoscaler.slo.settings import SloScalerSettings
from gpuplane.autoscaler.slo.snapshot import PoolSnapshot

_EPS = 1e-9


@dataclass(frozen=True, slots=True)
class Need:
    replicas: int
    binding: str
    slo: int
    backlog: int
    kv: int
    backlog_rps: float
    kv_demand: float
    unattainable: bool


@dataclass(frozen=True, slots=True)
class Load:
    """The load one need is computed for: the provisioned rate, the observed rate and the
    queue expected when new replicas start serving."""

    forecast_rps: float
    observed_rps: float
    projected_queue: float
    # Requests' worth of waiting beyond the queue-time budget (observed rate x the excess of
    # the queue-time p90 over its budget): a backlog the queue gauge may not show.
    waited_queue: float = 0.0


def smallest_meeting(
    pool: PoolSnapshot, rate: float, targets: SloTargets, corrections: Corrections
) -> tuple[int, bool]:
    """(fewest replicas meeting the SLO at ``rate``, whether even ``max_replicas`` fails).

    Binary search: the capacity model's predictions do not get worse with more replicas.
    """
    if rate <= 0:
        return 0, False
    mix = pool.signals.mix

    def ok(n: int) -> bool:
        return meets_at(pool.capacity, pool.role, n, rate, mix, targets, corrections)

    lo, hi = 1, pool.max_replicas
    if not ok(hi):
        return hi, True
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo, False


def shortfall(
    pool: PoolSnapshot, replicas: int, rate: float, targets: SloTargets, fixes: Corrections
) -> str:
    """Why ``replicas`` do not meet the SLO at ``rate``: the first objective the corrected
    prediction misses, with its figure (for the decision's reason)."""
    p = pool.capacity.predict(pool.role, replicas, rate, pool.signals.mix)
    if not p.utilisation < 1.0:
        return f"{replicas} would saturate (utilisation {p.utilisation:.2f})"
    share = targets.request_attainment
    if share is not None:
        ttft, tpot = targets.ttft_p90_s / fixes.ttft, targets.itl_p99_s / fixes.itl
        got = pool.capacity.request_attainment(
            pool.role, replicas, rate, pool.signals.mix, ttft, tpot
        )
        if got < share:
            return f"{got:.3f} of requests at {replicas} would meet it < {share:.3g}"
        return f"{replicas} meet it"
    checks = (
        ("TTFT p90", p.ttft_p90_s, fixes.ttft, targets.ttft_p90_s),
        ("ITL p99", p.itl_p99_s, fixes.itl, targets.itl_p99_s),
    )
    for name, value, factor, target in checks:
        if value is not None and not value * factor <= target:
            return f"{name} at {replicas} would be {value * factor:.3g} s > {target:.3g} s"
    return f"{replicas} meet it"


@dataclass(frozen=True, slots=True)
class CorrectionUpdate:
    """The corrections one decision applies, and what it remembers about the pool's state."""

    fixes: Corrections
    ready: int
    unsettled_s: float | None
    settled: bool


def _ratio(
    observed: float | None, predicted: float | None, target: float, lo: float, hi: float
) -> float | None:
    """Observed over predicted, trusted in proportion to how close to the target the pool
    runs (None when there is nothing to compare).

    Far below the target the ratio is mostly fixed costs and the histogram's bucket width,
    and multiplying a queueing tail by it would mislead; near the target it is what matters.
    """
    if observed is None or predicted is None:
        return None
    if not (math.isfinite(predicted) and predicted > 0 and math.isfinite(observed)):
        return None
    raw = min(hi, max(lo, observed / predicted))
    weight = min(1.0, max(observed, predicted) / target)
    return min(hi, max(lo, 1.0 + (raw - 1.0) * weight))


def _blend(old: float, new: float | None, weight: float) -> float:
    """Geometric moving average of ratios (``new`` None keeps ``old``)."""
    if new is None:
        return old
    return math.exp((1.0 - weight) * math.log(old) + weight * math.log(new))


def corrections(
    pool: PoolSnapshot,
    observed_rps: float,
    targets: SloTargets,
    settings: SloScalerSettings,
    now_s: float,
) -> CorrectionUpdate:
    """Observed over predicted latency at the Ready replicas and the observed rate, smoothed
    across decisions, learnt only while the pool is in a steady state.

    The latency histograms cover the last ``window_s``. A window in which the Ready count
    changed mixes two pool sizes, and one with a queued backlog (more waiting than one TTFT
    budget of arrivals, Little's law) measures the backlog's drain: neither says anything about
    the model, so the previous corrections stay until a whole window has passed since.
    """
    mem, sig, ready = pool.memory, pool.signals, pool.replicas.ready
    unsettled = mem.unsettled_s
    if mem.ready is not None and mem.ready != ready:
        unsettled = now_s
    if sig.num_requests_waiting > max(1.0, observed_rps * targets.ttft_p90_s):
        unsettled = now_s
    settled = unsettled is None or now_s - unsettled >= sig.window_s
    ttft, itl = mem.ttft_correction, mem.itl_correction
    if settled and ready >= 1 and observed_rps > 0:
        predicted = pool.capacity.predict(pool.role, ready, observed_rps, sig.mix)
        lo, hi, w = settings.correction_min, settings.correction_max, settings.correction_smoothing
        if pool.role is not PoolRole.DECODE:
            seen = _ratio(sig.ttft_p90_s, predicted.ttft_p90_s, targets.ttft_p90_s, lo, hi)
            ttft = _blend(ttft, seen, w)
        if pool.role is not PoolRole.PREFILL:
            seen = _ratio(sig.itl_p99_s, predicted.itl_p99_s, targets.itl_p99_s, lo, hi)
            itl = _blend(itl, seen, w)
    return CorrectionUpdate(Corrections(ttft, itl), ready, unsettled, settled)


def projected_queue(pool: PoolSnapshot, now_s: float, observed_rps: float) -> float:
    """The waiting queue when a replica started now would serve (``now + cold start``).

    Between now and then the Ready replicas, joined by each loading one at its ready time,
    serve at most their saturation rate; the queue grows by the shortfall or drains by the
    spare capacity, piece by piece.
    """
    queue = pool.signals.num_requests_waiting
    end = now_s + pool.cold_start_s
    arrivals = sorted(
        min(end, max(now_s, r.ready_at(pool.cold_start_s))) for r in pool.replicas.loading
    )
    serving = pool.replicas.ready + sum(1 for t in arrivals if t <= now_s)
    probe = observed_rps if observed_rps > 0 else 1.0
    t = now_s
    for boundary in [*(a for a in arrivals if a > now_s), end]:
        if boundary > t:
            cap = sustainable_rps(pool.capacity, pool.role, serving, pool.signals.mix, probe)
            queue = max(0.0, queue + (observed_rps - cap) * (boundary - t))
            t = boundary
        if boundary < end:
            serving += 1
    return queue


def kv_demand(pool: PoolSnapshot, load: Load) -> float:
    """KV cache the forecast load would occupy, in replicas' worth of a full cache."""
    sig = pool.signals
    demand = sig.kv_cache_usage * pool.replicas.ready
    if demand == 0:
        return 0.0
    if pool.role is PoolRole.DECODE and sig.num_requests_running >= 1:
        waiting = sig.num_requests_waiting
        demand *= (sig.num_requests_running + waiting) / sig.num_requests_running
    if load.observed_rps > 0:
        demand *= load.forecast_rps / load.observed_rps
    return demand


def pool_need(
    pool: PoolSnapshot,
    load: Load,
    targets: SloTargets,
    fixes: Corrections,
    settings: SloScalerSettings,
    factor: float = 1.0,
) -> Need:
    """Every term at ``factor`` times the load (1 + hysteresis for the scale-down figure)."""
    rate = load.forecast_rps * factor
    slo, unattainable = smallest_meeting(pool, rate, targets, fixes)
    terms = {"slo": slo}
    backlog = 0
    backlog_rps = 0.0
    if pool.role is not PoolRole.DECODE:
        excess = max(
            load.projected_queue - load.observed_rps * targets.ttft_p90_s, load.waited_queue
        )
        if excess > 0:
            backlog_rps = excess * factor / settings.backlog_drain_s
            backlog, short = smallest_meeting(pool, rate + backlog_rps, targets, fixes)
            unattainable = unattainable or short
        terms["backlog"] = backlog
    kv = 0
    demand = 0.0
    if pool.role is not PoolRole.PREFILL:
        demand = kv_demand(pool, load) * factor
        units = demand / settings.kv_usage_target
        # A need beyond max_replicas is clamped later; cap it here so it stays an integer.
        kv = pool.max_replicas if not units < pool.max_replicas else math.ceil(units - _EPS)
        terms["kv"] = kv
        ready = pool.replicas.ready
        if ready > 0 and pool.signals.preemptions_per_s > settings.preemption_rps_threshold:
            step = max(1, math.ceil(ready * settings.preemption_step_fraction - _EPS))
            terms["preemption"] = ready + step
            kv = max(kv, ready + step)
    binding = max(terms, key=lambda k: terms[k])  # first of equals: slo before the others
    return Need(
        replicas=max(terms.values()),
        binding=binding,
        slo=slo,
        backlog=backlog,
        kv=kv,
        backlog_rps=backlog_rps,
        kv_demand=demand,
        unattainable=unattainable,
    )
