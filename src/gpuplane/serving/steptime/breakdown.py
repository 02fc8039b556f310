"""A step's time by operator: how long each kind of kernel ran in total and what bounded it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from gpuplane.serving.batch import StepTime

Bound = Literal["compute", "memory", "communication", "overhead"]


@dataclass(slots=True)
class OperatorTotal:
    """One operator class summed over the step (all layers)."""

    count: int = 0
    compute_s: float = 0.0
    memory_s: float = 0.0
    communication_s: float = 0.0
    fixed_s: float = 0.0
    extrapolated: bool = False

    @property
    def total_s(self) -> float:
        return self.compute_s + self.memory_s + self.communication_s + self.fixed_s

    @property
    def bound(self) -> Bound:
        parts: dict[Bound, float] = {
            "compute": self.compute_s,
            "memory": self.memory_s,
            "communication": self.communication_s,
            "overhead": self.fixed_s,
        }
        return max(parts, key=lambda k: parts[k])


@dataclass(slots=True)
class StepBreakdown:
    """Per-operator totals of one step plus the CPU overhead; ``step_time()`` sums them."""

    operators: dict[str, OperatorTotal] = field(default_factory=dict)
    cpu_overhead_s: float = 0.0

    def add(
        self,
        op: str,
        *,
        count: int,
        compute_s: float = 0.0,
        memory_s: float = 0.0,
        communication_s: float = 0.0,
        fixed_s: float = 0.0,
        extrapolated: bool = False,
    ) -> None:
        total = self.operators.setdefault(op, OperatorTotal())
        total.count += count
        total.compute_s += compute_s * count
        total.memory_s += memory_s * count
        total.communication_s += communication_s * count
        total.fixed_s += fixed_s * count
        total.extrapolated = total.extrapolated or extrapolated

    def step_time(self) -> StepTime:
        compute = sum(o.compute_s for o in self.operators.values())
        memory = sum(o.memory_s for o in self.operators.values())
        comm = sum(o.communication_s for o in self.operators.values())
        overhead = sum(o.fixed_s for o in self.operators.values()) + self.cpu_overhead_s
        return StepTime(
            total_s=compute + memory + comm + overhead,
            compute_s=compute,
            memory_s=memory,
            communication_s=comm,
            overhead_s=overhead,
        )

    @property
    def bottleneck(self) -> Literal["compute", "memory", "communication"]:
        st = self.step_time()
        parts: dict[Literal["compute", "memory", "communication"], float] = {
            "compute": st.compute_s,
            "memory": st.memory_s,
            "communication": st.communication_s,
        }
        return max(parts, key=lambda k: parts[k])
