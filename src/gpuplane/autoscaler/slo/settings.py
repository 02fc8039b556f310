"""The SLO-aware scaler's settings: the objective, the forecast, and how cautiously to move.

Durations accept what :func:`gpuplane.core.duration.parse_duration_s` accepts (``90``,
``"5m"``). Mistakes are InputErrors naming the field (and, from YAML, the line).
"""

from __future__ import annotations

from statistics import NormalDist
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from gpuplane.autoscaler.slo.capacity import SloTargets
from gpuplane.core.duration import parse_duration_s
from gpuplane.core.errors import InputError
from gpuplane.core.validation import validate_model
from gpuplane.core.yamlio import validate_yaml


def _seconds(value: object) -> float:
    try:
        return parse_duration_s(value)
    except InputError as err:  # its text says what a duration looks like
        raise ValueError(err.render()) from None


Seconds = Annotated[float, BeforeValidator(_seconds)]


class SloScalerSettings(BaseModel):
    """How the scaler turns a forecast and a capacity model into replica counts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ttft_p90_s: Seconds = Field(
        2.0,
        gt=0,
        description="TTFT objective at the 90th percentile (Vidur-Search's SLO: 2 s)",
    )
    itl_p99_s: Seconds = Field(
        0.2,
        gt=0,
        description="inter-token latency objective at the 99th percentile (Vidur-Search: 0.2 s)",
    )
    objective: Literal["percentile", "per_request"] = Field(
        "percentile",
        description="what the objective counts. percentile: TTFT p90 <= ttft_p90_s and ITL p99 "
        "<= itl_p99_s over the pool (Vidur-Search's form, checked each minute); per_request: at "
        "least request_attainment of the requests have TTFT <= ttft_p90_s and mean time per "
        "output token <= itl_p99_s (the twin's slo_attainment, most SLO contracts' form)",
    )
    request_attainment: float = Field(
        0.95,
        gt=0,
        lt=1,
        description="with objective per_request: the share of requests that must meet both "
        "thresholds",
    )
    target_margin: float = Field(
        1.0,
        gt=0,
        le=1,
        description="aim at this fraction of the TTFT and ITL objectives (1: the objectives "
        "themselves; 0.8 leaves a 20 % margin for what the model misses)",
    )
    itl_margin: float = Field(
        1.0,
        gt=0,
        le=10,
        description="multiplies the ITL objective the scaler sizes for (on top of "
        "target_margin); above 1 sizes for a looser tail than the objective, e.g. when what "
        "matters is each request's mean time per output token rather than the pool's ITL p99",
    )
    sync_period_s: Seconds = Field(
        15.0,
        gt=0,
        description="time between decisions; a replica not started now starts one period later, "
        "so the forecast horizon is cold start + this",
    )
    forecast_alpha: float = Field(
        0.3, gt=0, le=1, description="Holt level smoothing: weight of the newest rate sample"
    )
    forecast_beta: float = Field(
        0.1, ge=0, le=1, description="Holt trend smoothing (0 = no trend, level only)"
    )
    forecast_damping: float = Field(
        0.95,
        ge=0.8,
        le=1,
        description="trend damping φ per sample step (1 = Holt's linear trend): 0.95 extrapolates "
        "at most 19 steps of the current trend, enough to follow a ramp over a cold start of "
        "minutes, not a slope fitted to 15 s noise",
    )
    forecast_cap_at_peak: bool = Field(
        True,
        description="cap the forecast bound at the highest latency-window rate of the history "
        "(or the point forecast if higher): bursty but stationary traffic is not a random walk",
    )
    forecast_quantile: float = Field(
        0.9,
        ge=0.5,
        lt=1,
        description="provision for this quantile of the forecast rate (0.5 = the point forecast)",
    )
    model_burstiness: bool = Field(
        True,
        description="size the prompt queue for the observed arrivals' burstiness (their c_a², "
        "Allen-Cunneen's G/G/c correction) instead of assuming Poisson arrivals",
    )
    headroom: float = Field(
        0.1, ge=0, le=1, description="extra load fraction provisioned above the forecast quantile"
    )
    hysteresis: float = Field(
        0.1,
        ge=0,
        lt=1,
        description="scale down only to a count that would still meet the SLO at this much more "
        "load, so noise around a boundary does not flap",
    )
    scale_down_stabilization_s: Seconds | None = Field(
        None,
        ge=0,
        description="scale down to the highest need of this window; None: the pool's forecast "
        "horizon (cold start + sync period), since a replica removed can be back that soon and "
        "the forecast bound already covers the horizon (the HPA's fixed default is 300 s)",
    )
    max_scale_down_fraction: float = Field(
        0.5,
        gt=0,
        le=1,
        description="most of the replicas removed in one decision (at least one)",
    )
    max_scale_up_replicas: int | None = Field(
        None, ge=1, description="most replicas added in one decision (None: no limit)"
    )
    kv_usage_target: float = Field(
        0.8,
        gt=0,
        le=1,
        description="decode pressure: keep KV cache usage at or below this (llm-d's saturation "
        "threshold 0.8)",
    )
    preemption_rps_threshold: float = Field(
        0.0, ge=0, description="preemptions per second above which the KV cache counts as full"
    )
    preemption_step_fraction: float = Field(
        0.25,
        gt=0,
        le=1,
        description="when preempting, ask for this fraction more replicas (at least one): the "
        "saturated usage gauge cannot say how far over capacity the demand is",
    )
    backlog_drain_s: Seconds = Field(
        60.0,
        gt=0,
        description="a queue longer than what one TTFT budget of arrivals explains should be "
        "drained within this time once new replicas serve",
    )
    queue_time_budget: float | None = Field(
        None,
        gt=0,
        le=1,
        description="share of the TTFT objective requests may spend queued (the 90th percentile "
        "of vllm:request_queue_time_seconds over the last minute); beyond it, the time they "
        "waited times the arrival rate counts as a backlog to drain, even when the queue gauge "
        "is empty at the decision (bursts between two samples). None: queue length only",
    )
    idle_window_s: Seconds = Field(
        300.0,
        ge=0,
        description="with min_replicas 0, scale to zero after this long without requests "
        "(KEDA's cooldownPeriod default)",
    )
    correction_min: float = Field(
        0.5, gt=0, le=1, description="lowest observed/predicted latency ratio applied"
    )
    correction_max: float = Field(
        4.0, ge=1, description="highest observed/predicted latency ratio applied"
    )
    correction_smoothing: float = Field(
        0.25,
        gt=0,
        le=1,
        description="weight of the newest observed/predicted ratio in the corrections' moving "
        "average (1 = no smoothing); decisions every 15 s over 60 s latency windows overlap, "
        "so 0.25 remembers about one window",
    )

    def stabilization_s(self, cold_start_s: float) -> float:
        """The scale-down window for a pool with this cold start."""
        if self.scale_down_stabilization_s is not None:
            return self.scale_down_stabilization_s
        return cold_start_s + self.sync_period_s

    def targets(self) -> SloTargets:
        return self.sized(SloTargets(self.ttft_p90_s, self.itl_p99_s))

    def sized(self, slo: SloTargets) -> SloTargets:
        """The targets the scaler sizes for: a service's objective with the margins applied and
        this objective's form (per-request share or percentiles)."""
        share = self.request_attainment if self.objective == "per_request" else None
        margin, itl = self.target_margin, self.itl_margin
        return SloTargets(slo.ttft_p90_s * margin, slo.itl_p99_s * margin * itl, share)

    def z(self) -> float:
        """The standard-normal quantile of ``forecast_quantile``."""
        return NormalDist().inv_cdf(self.forecast_quantile)


def settings_from_dict(data: object, source: str | None = None) -> SloScalerSettings:
    """Validate a mapping (e.g. a scenario's ``autoscaler.slo`` block)."""
    if data is None:
        return SloScalerSettings()
    try:
        return validate_model(SloScalerSettings, data)
    except InputError as err:
        raise (err.located(source) if source is not None else err) from None


def settings_from_yaml(text: str, source: str) -> SloScalerSettings:
    """Validate a YAML document; errors carry the file, the line and the field."""
    return validate_yaml(SloScalerSettings, text, source, what="SLO scaler settings")
