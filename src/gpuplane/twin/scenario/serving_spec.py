"""A scenario's ``serving:`` section as values: which Deployments serve which traffic, how.

A service ties a Deployment whose pods run vLLM or SGLang (recognised from their container
args) to a request stream and a router; with ``prefill_deployment`` the service is
disaggregated (that Deployment's pods prefill, the main Deployment's decode). Engine cold start
is image pull (once per node and image) + weight loading (weights per GPU / storage bandwidth)
+ engine start-up (CUDA context, profiling run, CUDA graph capture).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from gpuplane.autoscaler.slo.settings import SloScalerSettings
from gpuplane.serving.cold_start import ColdStart
from gpuplane.serving.traffic.generators import (
    LognormalLengths,
    gamma_arrivals,
    synthetic_trace,
)
from gpuplane.serving.traffic.trace import Trace


@dataclass(frozen=True, slots=True)
class TrafficSpec:
    """A trace (scaled, shifted, repeated to the end of the run) or a synthetic stream."""

    trace: Trace | None = None
    rate_scale: float = 1.0
    repeat: bool = True
    start_s: float = 0.0
    duration_s: float | None = None
    # Synthetic: Gamma arrivals (cv 1 = Poisson) with log-normal lengths.
    rate_per_s: float = 0.0
    cv: float = 1.0
    prompt_median: int = 1024
    output_median: int = 256
    sigma: float = 0.8

    def build(self, until_s: float, rng: np.random.Generator) -> Trace:
        """The requests of ``[start_s, until_s)`` (times from 0 of the run)."""
        span = max(until_s - self.start_s, 0.0)
        if self.duration_s is not None:
            span = min(span, self.duration_s)
        if self.trace is not None:
            base = (
                self.trace.rate_scaled(self.rate_scale, span)
                if self.repeat
                else self.trace.time_scaled(self.rate_scale).window(0.0, span)
            )
        else:
            arrivals = gamma_arrivals(self.rate_per_s, self.cv, rng, duration_s=span)
            lengths = LognormalLengths(
                self.prompt_median, self.sigma, self.output_median, self.sigma
            )
            base = synthetic_trace(arrivals, lengths, rng, "synthetic")
        return Trace(
            base.arrival_s + self.start_s, base.prompt_tokens, base.output_tokens, base.source
        )


@dataclass(frozen=True, slots=True)
class ServiceSpec:
    name: str
    namespace: str
    deployment: str
    traffic: TrafficSpec
    router: str = "llm-d"
    prefill_deployment: str | None = None
    slo_ttft_s: float = 2.0  # TTFT P90 target
    slo_itl_s: float = 0.1  # ITL P99 target (and the per-request TPOT bound)
    router_queue_limit: int = 1000  # requests held while no engine is ready
    model: str = ""  # the served model (for the KV size moved under P/D)
    # P/D: the KV cache moves from the prefill to the decode engine over one RDMA NIC per rank.
    kv_link_gbit_per_s: float = 400.0


@dataclass(frozen=True, slots=True)
class ServingSpec:
    services: tuple[ServiceSpec, ...] = ()
    slo_scalers: tuple[SloScalerSpec, ...] = ()
    scrape_interval_s: float = 15.0  # Prometheus scrape interval of the engines' /metrics
    cold_start: ColdStart = field(default_factory=ColdStart)


class SignalSource(StrEnum):
    """Where the twin's SLO scaler reads its signals from.

    ``deployable``: only the queries the KEDA external scaler runs on a real Prometheus
    (``autoscaler.slo.queries``), so the run shows what ``deploy render serving`` installs.
    ``oracle``: those, with what only the twin knows put in their place: the arrivals per sync
    period counted from the request stream (not a 1-minute rate of a scraped counter), the token
    means and eight exact prompt-length quantiles of the last five minutes' arrivals (not the
    histograms of finished requests), and the arrivals' burstiness (c_a²).
    """

    DEPLOYABLE = "deployable"
    ORACLE = "oracle"


@dataclass(frozen=True, slots=True)
class SloScalerSpec:
    """gpuplane's SLO-aware scaler on a service's Deployment."""

    service: str
    min_replicas: int = 1
    max_replicas: int = 16
    settings: SloScalerSettings = field(default_factory=SloScalerSettings)
    signals: SignalSource = SignalSource.DEPLOYABLE
