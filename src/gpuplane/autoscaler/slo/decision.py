"""What the SLO-aware scaler decides, with the numbers behind each pool's count."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from gpuplane.autoscaler.slo.capacity import PoolRole, Prediction
from gpuplane.autoscaler.slo.snapshot import PoolMemory


class ScaleAction(StrEnum):
    SCALE_UP = "scale-up"
    SCALE_DOWN = "scale-down"
    HOLD = "hold"
    ACTIVATE = "activate"  # from zero on the first request
    SCALE_TO_ZERO = "scale-to-zero"
    CLAMP = "clamp"  # outside min/max: straight to the bound


@dataclass(frozen=True, slots=True)
class PoolNumbers:
    """The arithmetic of one pool's decision.

    Rates are requests/s. ``forecast_rps`` is the rate provisioned for (forecast upper bound
    with headroom, at least the last window's rate with headroom). ``needed_*`` are the terms
    (0 when a term does not apply to the pool's role); ``needed`` is their maximum and
    ``binding`` names it; ``needed_down`` is the same at ``1 + hysteresis`` times the load, the
    figure recorded for the scale-down window; ``stabilised`` is the window's highest.
    ``kv_demand`` is the KV cache the forecast load would occupy, in replicas' worth at 100 %.
    ``predicted`` is the capacity model's answer at the desired count and the forecast rate.
    ``corrections_settled`` says whether this decision's latencies updated the corrections (the
    pool was in a steady state for a whole latency window).
    """

    observed_rps: float
    level_rps: float
    trend_rps_per_s: float
    sigma_rps: float
    forecast_rps: float
    horizon_s: float
    ttft_correction: float
    itl_correction: float
    corrections_settled: bool
    waiting: float
    projected_queue: float
    backlog_rps: float
    kv_demand: float
    needed_slo: int
    needed_backlog: int
    needed_kv: int
    needed: int
    needed_down: int
    binding: str
    unattainable: bool
    stabilised: int | None
    idle_s: float | None
    predicted: Prediction | None


@dataclass(frozen=True, slots=True)
class PoolDecision:
    """``desired_replicas`` is what to write to the Deployment's ``spec.replicas``; keep
    ``memory`` for the pool's next snapshot."""

    name: str
    role: PoolRole
    current_replicas: int
    desired_replicas: int
    action: ScaleAction
    reason: str
    numbers: PoolNumbers
    memory: PoolMemory

    @property
    def rescale(self) -> bool:
        return self.desired_replicas != self.current_replicas


@dataclass(frozen=True, slots=True)
class SloDecision:
    now_s: float
    pools: tuple[PoolDecision, ...]

    def pool(self, name: str) -> PoolDecision:
        for p in self.pools:
            if p.name == name:
                return p
        raise KeyError(f"no pool {name!r}; pools: {', '.join(p.name for p in self.pools)}")
