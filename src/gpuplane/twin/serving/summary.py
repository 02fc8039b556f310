"""Per-service serving results for the run summary: request accounting, latency percentiles,
SLO attainment and goodput.

SLO attainment is per request, as DistServe and Vidur count it: a request meets the SLO when it
completed, its TTFT is within the TTFT target and its mean time per output token (after the
first) is within the ITL target. The TTFT-P90 and ITL-P99 columns are the targets' own
statistics over completed requests and over every inter-token gap.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuplane.serving.routing.outcome import RequestOutcome, SimulationResult, Status
from gpuplane.twin.component import fields_dict
from gpuplane.twin.scenario.serving_spec import ServiceSpec


@dataclass(frozen=True, slots=True)
class RequestCounts:
    arrived: int
    completed: int
    rejected: int
    aborted: int
    in_flight: int

    def as_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True, slots=True)
class LatencySummary:
    """Percentiles in seconds (None: no completed request, or no output token after the
    first)."""

    ttft_p50_s: float | None
    ttft_p90_s: float | None
    ttft_p99_s: float | None
    itl_p50_s: float | None
    itl_p90_s: float | None
    itl_p99_s: float | None
    e2e_p50_s: float | None
    e2e_p90_s: float | None
    e2e_p99_s: float | None

    def as_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True, slots=True)
class SloTargetsSummary:
    ttft_p90_s: float
    itl_p99_s: float

    def as_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True, slots=True)
class TerminationSummary:
    """Pods of the service deleted on a healthy node (scale-down, eviction): how many drained
    within terminationGracePeriodSeconds, how many were killed, the requests that killing
    aborted, and the GPU-hours the terminating pods still held (not in the pods' allocated
    GPU-hours: the twin frees a deleted pod's GPUs at once)."""

    pods: int = 0
    drained: int = 0
    killed: int = 0
    requests_aborted: int = 0
    gpu_hours: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True, slots=True)
class ServiceSummary:
    name: str
    deployment: str  # namespace/name
    router: str
    requests: RequestCounts
    not_served_reasons: Mapping[str, int]  # rejected or aborted, digits written N
    latency_s: LatencySummary
    slo: SloTargetsSummary
    slo_attainment: float | None  # None: no request arrived
    ttft_p90_met: bool
    itl_p99_met: bool
    goodput_rps: float
    engines_started: int
    termination: TerminationSummary = TerminationSummary()

    def as_dict(self) -> dict[str, Any]:
        return fields_dict(self)


@dataclass(frozen=True, slots=True)
class ServingSummary:
    """The serving runtime's section: one entry per service (``serving`` in summary.json)."""

    services: tuple[ServiceSummary, ...]

    def as_dict(self) -> list[dict[str, Any]]:
        return [s.as_dict() for s in self.services]


def meets_slo(o: RequestOutcome, spec: ServiceSpec) -> bool:
    """Completed, TTFT within the target and mean time per output token within the ITL one."""
    if o.status is not Status.COMPLETED or o.ttft_s is None or o.e2e_s is None:
        return False
    tpot = (o.e2e_s - o.ttft_s) / (o.output_tokens - 1) if o.output_tokens > 1 else 0.0
    return o.ttft_s <= spec.slo_ttft_s and tpot <= spec.slo_itl_s


def _r(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 4)


def service_summary(
    spec: ServiceSpec,
    result: SimulationResult,
    engines: int,
    termination: TerminationSummary | None = None,
) -> ServiceSummary:
    reasons: dict[str, int] = {}
    for o in result.outcomes:
        if o.status in (Status.REJECTED, Status.ABORTED):
            key = re.sub(r"\d+", "N", o.reason)  # one line per kind of reason
            reasons[key] = reasons.get(key, 0) + 1
    met = sum(1 for o in result.outcomes if meets_slo(o, spec))
    arrived = result.num_arrived
    latency = LatencySummary(
        **{k: _r(v) for k, v in result.latency_summary((50.0, 90.0, 99.0)).items()}
    )
    return ServiceSummary(
        name=spec.name,
        deployment=f"{spec.namespace}/{spec.deployment}",
        router=spec.router,
        requests=RequestCounts(
            arrived=arrived,
            completed=result.count(Status.COMPLETED),
            rejected=result.count(Status.REJECTED),
            aborted=result.count(Status.ABORTED),
            in_flight=result.count(Status.IN_FLIGHT),
        ),
        not_served_reasons=dict(sorted(reasons.items())),
        latency_s=latency,
        slo=SloTargetsSummary(ttft_p90_s=spec.slo_ttft_s, itl_p99_s=spec.slo_itl_s),
        slo_attainment=round(met / arrived, 4) if arrived else None,
        ttft_p90_met=(latency.ttft_p90_s or math.inf) <= spec.slo_ttft_s,
        itl_p99_met=(latency.itl_p99_s or math.inf) <= spec.slo_itl_s,
        goodput_rps=round(met / result.end_s, 4) if result.end_s > 0 else 0.0,
        engines_started=engines,
        termination=termination or TerminationSummary(),
    )
