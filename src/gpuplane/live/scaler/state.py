"""What the scaler remembers per ScaledObject between decisions (the twin keeps the same memory
on its ``_Scaler``): the decision's ``PoolMemory``, the signals' ``SignalMemory`` (the
arrival-rate history by grid time and the request mix last seen), when each loading replica was
first seen, and the last evaluation (KEDA
calls ``GetMetrics`` and then ``IsActive`` for one poll: both read one decision)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from gpuplane.autoscaler.slo.decision import PoolDecision
from gpuplane.autoscaler.slo.signals import SignalMemory
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
    signals: SignalMemory = field(default_factory=SignalMemory)
    loading_starts: tuple[float, ...] = ()
    last: Evaluation | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
