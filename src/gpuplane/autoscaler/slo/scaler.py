"""One decision of the SLO-aware scaler: ``decide(snapshot, settings) -> SloDecision``.

Per pool, in order:

1. Forecast the arrival rate over the horizon ``cold start + sync period`` (``forecast.py``),
   never below the last window's rate, with headroom; compute the need terms (``need.py``) at
   that load and at ``1 + hysteresis`` times it.
2. At zero replicas: any request or queued work activates the pool at the need, at least one
   and at least ``min_replicas`` (the need already counts the queue that builds during the cold
   start); with ``min_replicas > 0``, go to the minimum.
3. With ``min_replicas`` 0, no request for ``idle_window_s`` and nothing loading: scale to zero
   (the idle window is the stabilisation for this step, as KEDA's cooldown is).
4. Outside ``[min, max]``: straight to the bound (a max lowered by hand wins even over loading
   pods). The floor is ``min_replicas``, or one while the pool is not idle.
5. A need above the current count (Ready + loading, the loading ones counted as the capacity
   they bring at their ready time) scales up at once, by at most ``max_scale_up_replicas``.
6. Otherwise the scale-down figure is recorded; the count goes down only to the highest figure
   of the last ``scale_down_stabilization_s`` (a first decision records the current count, as
   the HPA does), by at most ``max_scale_down_fraction`` of it, and never while a pod is still
   loading: the ReplicaSet controller deletes not-ready pods first
   (``controller_utils.go: ActivePodsWithRanks``), so any scale-down would kill the replica the
   pool has been waiting minutes for.
"""

from __future__ import annotations

import math
from dataclasses import replace

from gpuplane.autoscaler.slo.decision import PoolDecision, PoolNumbers, ScaleAction, SloDecision
from gpuplane.autoscaler.slo.forecast import RateForecast, forecast_rate
from gpuplane.autoscaler.slo.need import (
    Load,
    corrections,
    pool_need,
    projected_queue,
    shortfall,
)
from gpuplane.autoscaler.slo.settings import SloScalerSettings
from gpuplane.autoscaler.slo.snapshot import PoolSnapshot, Recommendation, SloSnapshot


def decide(snapshot: SloSnapshot, settings: SloScalerSettings) -> SloDecision:
    """Each pool's desired replica count; pools are independent (P/D pools scale separately)."""
    return SloDecision(
        snapshot.now_s, tuple(_decide_pool(p, snapshot.now_s, settings) for p in snapshot.pools)
    )


def _forecast(pool: PoolSnapshot, settings: SloScalerSettings) -> RateForecast:
    sig = pool.signals
    return forecast_rate(
        sig.arrival_rps,
        sig.step_s,
        pool.cold_start_s + settings.sync_period_s,
        alpha=settings.forecast_alpha,
        beta=settings.forecast_beta,
        z=settings.z(),
        headroom=settings.headroom,
        phi=settings.forecast_damping,
        peak_steps=(
            max(1, round(sig.window_s / sig.step_s)) if settings.forecast_cap_at_peak else None
        ),
    )


def _latest(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    return a if b is None else max(a, b)


def _fmt(x: float) -> str:
    return f"{x:.3g}"


class _Step:
    """The scratch of one pool's decision; never escapes :func:`_decide_pool`."""

    def __init__(self, pool: PoolSnapshot, now_s: float, settings: SloScalerSettings) -> None:
        self.pool, self.now_s, self.settings = pool, now_s, settings
        sig = pool.signals
        self.current = pool.replicas.current
        self.forecast = _forecast(pool, settings)
        self.observed = sig.observed_rps()
        rate = max(self.forecast.upper_rps, self.observed * (1.0 + settings.headroom))
        self.targets = settings.targets() if pool.slo is None else settings.sized(pool.slo)
        waited = 0.0
        budget, queued = settings.queue_time_budget, sig.queue_time_p90_s
        if budget is not None and queued is not None:
            waited = self.observed * max(0.0, queued - budget * self.targets.ttft_p90_s)
        queue = projected_queue(pool, now_s, self.observed)
        self.load = Load(rate, self.observed, queue, waited)
        self.learnt = corrections(pool, self.observed, self.targets, settings, now_s)
        self.fixes = self.learnt.fixes
        self.up = pool_need(pool, self.load, self.targets, self.fixes, settings)
        self.down = pool_need(
            pool, self.load, self.targets, self.fixes, settings, 1.0 + settings.hysteresis
        )
        self.last_traffic = _latest(pool.memory.last_traffic_s, sig.last_traffic_s(now_s))
        self.stabilised: int | None = None
        self.recommendations = pool.memory.recommendations

    def idle_s(self) -> float | None:
        """Seconds without traffic; None if the pool never had any within its history."""
        if self.last_traffic is not None:
            return self.now_s - self.last_traffic
        sig = self.pool.signals
        return len(sig.arrival_rps) * sig.step_s if sig.arrival_rps else None

    def is_idle(self) -> bool:
        idle = self.idle_s()
        return idle is not None and idle >= self.settings.idle_window_s

    def has_work(self) -> bool:
        sig = self.pool.signals
        recent = bool(sig.arrival_rps) and sig.arrival_rps[-1] > 0
        return recent or sig.num_requests_waiting > 0 or sig.num_requests_running > 0

    def record(self, floor: int) -> int:
        """Store this decision's scale-down figure; the highest figure still in the window."""
        pool, window = self.pool, self.settings.stabilization_s(self.pool.cold_start_s)
        figure = min(pool.max_replicas, max(floor, self.down.replicas))
        kept = [r for r in self.recommendations if r.t_s > self.now_s - window]
        if not self.recommendations and self.current > 0:
            kept.append(Recommendation(self.now_s, self.current))  # the first decision
        kept.append(Recommendation(self.now_s, figure))
        self.recommendations = tuple(kept)
        self.stabilised = max(r.replicas for r in kept)
        return self.stabilised


def _decide_pool(pool: PoolSnapshot, now_s: float, settings: SloScalerSettings) -> PoolDecision:
    if not settings.model_burstiness and pool.signals.arrival_scv != 1.0:
        pool = replace(pool, signals=replace(pool.signals, arrival_scv=1.0))  # Poisson
    step = _Step(pool, now_s, settings)
    desired, action, reason = _choose(step)
    return _result(step, desired, action, reason)


_Choice = tuple[int, ScaleAction, str]


def _choose(step: _Step) -> _Choice:
    pool, current = step.pool, step.current
    lo, hi = pool.min_replicas, pool.max_replicas
    if current == 0:
        return _from_zero(step)
    if lo == 0 and step.is_idle() and not pool.replicas.loading:
        step.recommendations = ()
        idle, window = _fmt(step.idle_s() or 0.0), _fmt(step.settings.idle_window_s)
        return 0, ScaleAction.SCALE_TO_ZERO, f"no requests for {idle} s >= idle window {window} s"
    floor = max(lo, 1)
    stabilised = step.record(floor)
    if current > hi:
        return hi, ScaleAction.CLAMP, f"{current} replicas above max_replicas {hi}"
    need = min(hi, max(floor, step.up.replicas))
    if current < floor:
        return need, ScaleAction.CLAMP, f"{current} replicas below the floor {floor}"
    if need > current:
        limit = step.settings.max_scale_up_replicas
        target = need if limit is None else min(need, current + limit)
        return target, ScaleAction.SCALE_UP, _up_reason(step, need, target)
    return _down(step, need, stabilised)


def _down(step: _Step, need: int, stabilised: int) -> _Choice:
    """At or above the need: hold, or scale down to the window's highest figure."""
    current, settings = step.current, step.settings
    window = _fmt(settings.stabilization_s(step.pool.cold_start_s))
    if stabilised >= current:
        if step.down.replicas >= current:
            why = "within the hysteresis band"
        else:
            why = f"stabilising: highest need in the last {window} s is {stabilised}"
        return current, ScaleAction.HOLD, f"need {need} <= {current} replicas; {why}"
    loading = len(step.pool.replicas.loading)
    if loading:
        why = (
            f"need {stabilised} < {current} replicas, but {loading} still loading: the "
            "ReplicaSet would delete not-ready pods first"
        )
        return current, ScaleAction.HOLD, why
    removable = max(1, math.floor(current * settings.max_scale_down_fraction))
    target = max(stabilised, current - removable)
    why = (
        f"need stayed <= {stabilised} for {window} s (at {_fmt(1 + settings.hysteresis)}x "
        f"load); {current} -> {target}"
    )
    return target, ScaleAction.SCALE_DOWN, why


def _from_zero(step: _Step) -> _Choice:
    pool = step.pool
    lo, hi = pool.min_replicas, pool.max_replicas
    if step.has_work():
        target = min(hi, max(lo, 1, step.up.replicas))
        step.recommendations = (Recommendation(step.now_s, target),)
        why = (
            f"requests at zero replicas: {target} for {_fmt(step.load.forecast_rps)} req/s and "
            f"{_fmt(step.load.projected_queue)} requests queued by the end of the "
            f"{_fmt(pool.cold_start_s)} s cold start"
        )
        return target, ScaleAction.ACTIVATE, why
    if lo > 0:
        step.recommendations = (Recommendation(step.now_s, lo),)
        return lo, ScaleAction.CLAMP, f"0 replicas below min_replicas {lo}"
    step.recommendations = ()
    return 0, ScaleAction.HOLD, "scaled to zero and no requests"


def _up_reason(step: _Step, need: int, target: int) -> str:
    up, t = step.up, step.targets
    slo = f"TTFT p90 <= {_fmt(t.ttft_p90_s)} s / ITL p99 <= {_fmt(t.itl_p99_s)} s"
    if t.request_attainment is not None:
        slo = (
            f"{_fmt(t.request_attainment)} of requests with TTFT <= {_fmt(t.ttft_p90_s)} s and "
            f"mean TPOT <= {_fmt(t.itl_p99_s)} s"
        )
    if up.binding == "slo" and 1 < need <= step.pool.max_replicas and not up.unattainable:
        missed = shortfall(step.pool, need - 1, step.load.forecast_rps, t, step.fixes)
        slo = f"{slo} ({missed})"
    why = {
        "slo": slo,
        "backlog": f"draining {_fmt(step.load.projected_queue)} queued requests",
        "kv": f"KV cache at {_fmt(step.settings.kv_usage_target)} usage",
        "preemption": f"{_fmt(step.pool.signals.preemptions_per_s)} preemptions/s",
    }[up.binding]
    text = (
        f"{_fmt(step.load.forecast_rps)} req/s forecast over the "
        f"{_fmt(step.forecast.horizon_s)} s horizon needs {need} replicas for {why}"
    )
    if up.unattainable:
        text += " (the SLO is not met even at max_replicas)"
    if target < need:
        text += f"; limited to +{step.settings.max_scale_up_replicas} per decision"
    return f"{text}; {step.current} -> {target}"


def _result(step: _Step, desired: int, action: ScaleAction, reason: str) -> PoolDecision:
    pool, up, down = step.pool, step.up, step.down
    predicted = None
    if desired > 0:
        predicted = pool.capacity.predict(
            pool.role, desired, step.load.forecast_rps, pool.signals.mix
        )
    numbers = PoolNumbers(
        observed_rps=step.observed,
        level_rps=step.forecast.level_rps,
        trend_rps_per_s=step.forecast.trend_rps_per_s,
        sigma_rps=step.forecast.sigma_rps,
        forecast_rps=step.load.forecast_rps,
        horizon_s=step.forecast.horizon_s,
        ttft_correction=step.fixes.ttft,
        itl_correction=step.fixes.itl,
        corrections_settled=step.learnt.settled,
        waiting=pool.signals.num_requests_waiting,
        projected_queue=step.load.projected_queue,
        backlog_rps=up.backlog_rps,
        kv_demand=up.kv_demand,
        needed_slo=up.slo,
        needed_backlog=up.backlog,
        needed_kv=up.kv,
        needed=up.replicas,
        needed_down=down.replicas,
        binding=up.binding,
        unattainable=up.unattainable,
        stabilised=step.stabilised,
        idle_s=step.idle_s(),
        predicted=predicted,
    )
    memory = replace(
        pool.memory,
        recommendations=step.recommendations,
        last_traffic_s=step.last_traffic,
        ttft_correction=step.fixes.ttft,
        itl_correction=step.fixes.itl,
        ready=step.learnt.ready,
        unsettled_s=step.learnt.unsettled_s,
    )
    return PoolDecision(
        pool.name, pool.role, step.current, desired, action, reason, numbers, memory
    )
