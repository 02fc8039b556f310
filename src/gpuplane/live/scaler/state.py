"""What the scaler remembers per ScaledObject between decisions (the twin keeps the same memory
on its ``_Scaler``): the decision's ``PoolMemory``, the arrival-rate history by grid time, when
each loading replica was first seen, the request mix last seen, and the last evaluation (KEDA
calls ``GetMetrics`` and then ``IsActive`` for one poll: both read one decision)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from gpuplane.autoscaler.slo.decision import PoolDecision
from gpuplane.autoscaler.slo.snapshot import PoolMemory
from gpuplane.live.scaler.metadata import ScalerConfig


@dataclass(frozen=True, slots=True)
class Evaluation:
    """One decision as KEDA sees it: the metric for the HPA and the activity."""

    decided_at_s: float
    desired: int
    current: int
    ready: int
    metric_value: float
    reason: str
    decision: PoolDecision

    @property
    def active(self) -> bool:
        return self.desired > 0


@dataclass(slots=True)
class ObjectState:
    config: ScalerConfig
    memory: PoolMemory = field(default_factory=PoolMemory)
    rates: dict[float, float] = field(default_factory=dict)
    loading_starts: tuple[float, ...] = ()
    mix: tuple[float, float] = (0.0, 0.0)
    last: Evaluation | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def forget_before(self, t_s: float) -> None:
        for old in [t for t in self.rates if t < t_s]:
            del self.rates[old]
