"""The MIG planner's inputs and outputs: a snapshot of the GPUs, settings, and the plan.

What the planner is asked: given GPUs (model, current layout, which current instances are in use
by pods) and pending demand (instances per profile), which layout should every GPU move to so the
demand is served with as few GPUs as possible, then as few GPUs reconfigured as possible, then as
few running pods evicted as possible.

Terms, used the same way everywhere:

- *demand*: pending requests, one MIG instance each, keyed by profile name (what a pod asks for
  as ``nvidia.com/mig-<profile>``; a request can be served by any GPU with a profile of that
  name). In-use instances are not part of the demand: their pods are already running.
- *kept*: an in-use instance whose pod stays where it is (the instance is in the target layout).
- *evicted*: an in-use instance whose pod does not stay; only allowed with ``allow_evict``. An
  evicted pod asks for its profile again, so it is re-placed like new demand.
- *used GPU*: hosts at least one kept instance or one instance serving demand.
- *reconfigured GPU*: its target layout differs from its current one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuplane.core.errors import InputError, Location
from gpuplane.slicing.mig.layout import EMPTY_LAYOUT, Instance, Layout
from gpuplane.slicing.mig.profiles import MigGpu


@dataclass(frozen=True, slots=True)
class GpuState:
    """One MIG-enabled GPU as it is now."""

    index: int
    model: MigGpu
    layout: Layout = EMPTY_LAYOUT
    in_use: frozenset[Instance] = frozenset()

    def __post_init__(self) -> None:
        stray = sorted(self.in_use - set(self.layout.instances))
        if stray:
            raise ValueError(f"GPU {self.index}: in-use instances {stray} are not in its layout")


@dataclass(frozen=True, slots=True)
class MigSnapshot:
    """The GPUs and the pending demand (profile name -> instances wanted)."""

    gpus: tuple[GpuState, ...]
    demand: tuple[tuple[str, int], ...] = ()

    def demand_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for name, n in self.demand:
            out[name] = out.get(name, 0) + n
        return out


def make_snapshot(gpus: Iterable[GpuState], demand: dict[str, int]) -> MigSnapshot:
    """A snapshot with its demand checked: every profile must exist on some GPU's model, counts
    must be >= 0, and GPU indices must be distinct. Demand names are normalised (``1g.10gb.me``
    becomes ``1g.10gb+me``)."""
    states = tuple(sorted(gpus, key=lambda g: g.index))
    indices = [g.index for g in states]
    if len(set(indices)) != len(indices):
        raise InputError("two GPUs share an index", expected="distinct GPU indices")
    models = {g.model.key: g.model for g in states}
    known = sorted({p.name for m in models.values() for p in m.profiles})
    out: dict[str, int] = {}
    for name, n in demand.items():
        profile = next((p for m in models.values() if (p := m.find_profile(name))), None)
        if profile is None:
            raise InputError(
                f"demand names profile {name!r}, which none of the GPUs has",
                expected=f"one of {', '.join(known)}",
                location=Location(field="demand"),
            )
        if n < 0:
            raise InputError(
                f"demand for {name} is {n}",
                expected="a count >= 0",
                location=Location(field="demand"),
            )
        out[profile.name] = out.get(profile.name, 0) + n
    return MigSnapshot(states, tuple(sorted((k, v) for k, v in out.items() if v)))


class MigPlanSettings(BaseModel):
    """How the planner may change GPUs and how long it may search."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    allow_evict: bool = Field(
        default=False,
        description="Let the plan remove in-use instances (their pods are re-placed as demand).",
    )
    apply_mode: Literal["nvml", "mig-parted"] = Field(
        default="nvml",
        description="nvml: instances are created and destroyed one by one at chosen starts, so "
        "untouched instances keep running; mig-parted: a changed GPU is cleared and rebuilt "
        "from counts with driver auto-placement, so every instance on it is recreated.",
    )
    time_limit_s: float = Field(
        default=30.0, gt=0, description="Solver time limit per objective stage, in seconds."
    )


@dataclass(frozen=True, slots=True)
class GpuTarget:
    """What one GPU should become."""

    index: int
    model: str
    current: Layout
    layout: Layout
    serves: tuple[tuple[str, int], ...]  # instances serving demand or kept pods, per profile
    kept: tuple[Instance, ...]
    evicted: tuple[Instance, ...]
    used: bool
    reconfigured: bool
    rebuilt: bool = False  # mig-parted mode: the GPU is cleared and every instance recreated

    @property
    def create(self) -> tuple[Instance, ...]:
        if self.rebuilt:
            return self.layout.instances
        return tuple(i for i in self.layout.instances if i not in self.current)

    @property
    def destroy(self) -> tuple[Instance, ...]:
        if self.rebuilt:
            return self.current.instances
        return tuple(i for i in self.current.instances if i not in self.layout)


@dataclass(frozen=True, slots=True)
class StageResult:
    """One lexicographic objective stage of the exact solve."""

    name: str  # "placed", "gpus_used", "reconfigured", "evicted"
    value: int
    bound: float  # the solver's dual bound (equal to value when proven optimal)
    status: str  # HiGHS model status
    optimal: bool


@dataclass(frozen=True, slots=True)
class MigPlan:
    """Target layouts and what they cost; ``optimal`` when every stage was proven optimal."""

    targets: tuple[GpuTarget, ...]
    gpus_used: int
    lower_bound: int  # no plan placing as many instances uses fewer GPUs
    reconfigured: int
    evicted: int
    placed: dict[str, int]
    unplaced: dict[str, int]
    optimal: bool
    status: str
    stages: tuple[StageResult, ...] = field(default=())
    apply_mode: str = "nvml"
