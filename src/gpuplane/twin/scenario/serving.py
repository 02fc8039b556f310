"""The scenario's ``serving:`` section (its shape; ``gpuplane.k8s.scenario.serving_section``
reads it)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gpuplane.serving.routing.registry import RouterName
from gpuplane.twin.scenario.fields import Seconds


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TraceTraffic(_Model):
    path: str = Field(description="An Azure LLM inference trace CSV, relative to the scenario.")
    # At most 100x: the repeated trace then holds about 350 MB of arrivals over 8 hours of the
    # Azure conversation trace; 2e70 asked for exabytes.
    rate_scale: float = Field(
        default=1.0, gt=0, le=100, allow_inf_nan=False, description="Multiply the request rate."
    )
    start: Seconds = Field(default=0.0, ge=0, description="When the first request arrives.")
    repeat: bool = Field(
        default=True, description="Repeat the (scaled) trace back to back to fill the run."
    )
    duration: Seconds | None = Field(
        default=None, gt=0, description="Stop sending requests this long after start."
    )


class PoissonTraffic(_Model):
    rate_per_s: float = Field(gt=0)
    prompt_tokens: int = Field(default=1024, gt=0, description="Median prompt length.")
    output_tokens: int = Field(default=256, gt=0, description="Median output length.")
    sigma: float = Field(default=0.8, ge=0, description="Log-normal spread of both lengths.")
    cv: float = Field(default=1.0, gt=0, description="Inter-arrival CV (1: Poisson; Gamma else).")
    start: Seconds = Field(default=0.0, ge=0)
    duration: Seconds | None = Field(default=None, gt=0)


class Traffic(_Model):
    trace: TraceTraffic | None = None
    poisson: PoissonTraffic | None = None

    @model_validator(mode="after")
    def _one(self) -> Traffic:
        if (self.trace is None) == (self.poisson is None):
            raise ValueError("give exactly one of trace or poisson")
        return self


class Slo(_Model):
    ttft_p90: Seconds = Field(default=2.0, gt=0)
    itl_p99: Seconds = Field(default=0.1, gt=0)


class Service(_Model):
    name: str = Field(min_length=1)
    namespace: str = "default"
    deployment: str = Field(description="The Deployment whose vLLM/SGLang pods serve it.")
    prefill_deployment: str | None = Field(
        default=None, description="P/D disaggregation: this Deployment's pods prefill."
    )
    router: RouterName = "llm-d"
    traffic: Traffic
    slo: Slo = Field(default_factory=Slo)
    router_queue_limit: int = Field(default=1000, ge=0)
    kv_link_gbit_per_s: float = Field(
        default=400.0, gt=0, description="P/D: NIC bandwidth the KV cache moves over (Gb/s)."
    )


class ColdStartSection(_Model):
    image_pull: Seconds = Field(default=60.0, ge=0)
    storage_gbps: float = Field(default=2.0, gt=0)
    init: Seconds = Field(default=45.0, ge=0)


class SloScalerEntry(_Model):
    """gpuplane's SLO-aware scaler for a service's Deployment (instead of KEDA/HPA)."""

    service: str
    min_replicas: int = Field(default=1, ge=0)
    max_replicas: int = Field(default=16, ge=1)
    settings: dict[str, object] = Field(
        default_factory=dict, description="SloScalerSettings fields (see docs/autoscaling.md)."
    )
    signals: Literal["deployable", "oracle"] = Field(
        default="deployable",
        description="deployable: the KEDA external scaler's queries only; oracle: also what "
        "only the twin knows (true arrivals, exact prompt quantiles, burstiness)",
    )

    @model_validator(mode="after")
    def _bounds(self) -> SloScalerEntry:
        if self.min_replicas > self.max_replicas:
            raise ValueError("min_replicas must not exceed max_replicas")
        return self


class ServingSection(_Model):
    scrape_interval: Seconds = Field(default=15.0, gt=0)
    cold_start: ColdStartSection = Field(default_factory=ColdStartSection)
    services: list[Service] = Field(default_factory=list)
    slo_scalers: list[SloScalerEntry] = Field(default_factory=list)
