"""Plan MIG layouts over the GPUs of many nodes: the step gpuplane's repartitioning controller
takes both in the twin (``twin/mig/controller.py``) and live (:mod:`controller_decision`).

The GPUs of every node are numbered into one planner snapshot, the demand is cut to the profiles
some GPU has, the exact planner (:func:`gpuplane.slicing.mig.planner.decide`) is asked once, and
its reconfigured targets are handed back per node and per GPU index on the node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpuplane.slicing.mig.layout import Instance, Layout
from gpuplane.slicing.mig.plan_types import (
    GpuState,
    GpuTarget,
    MigPlan,
    MigPlanSettings,
    make_snapshot,
)
from gpuplane.slicing.mig.planner import decide
from gpuplane.slicing.mig.profiles import MigGpu


@dataclass(frozen=True, slots=True)
class NodeGpu:
    """One MIG GPU of a node, as the planner should see it."""

    node: str
    gpu: int  # the GPU's index on its node
    model: MigGpu
    layout: Layout
    in_use: frozenset[Instance] = frozenset()


@dataclass(frozen=True, slots=True)
class NodesPlan:
    """The planner's answer and the GPUs it reconfigures, per node (by name) and GPU index."""

    plan: MigPlan
    changes: tuple[tuple[str, tuple[tuple[int, GpuTarget], ...]], ...]

    def nodes(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.changes)


def profile_name(suffix: str, known: set[str]) -> str | None:
    """The profile a resource-name suffix means (``1g.10gb.me`` -> ``1g.10gb+me``), if known."""
    for name in known:
        if name == suffix or name.replace("+", ".") == suffix:
            return name
    return None


def plan_nodes(
    gpus: Sequence[NodeGpu], demand: Mapping[str, int], settings: MigPlanSettings
) -> NodesPlan | None:
    """Plan ``demand`` (profile or resource suffix -> instances) over ``gpus``; None when there
    is nothing to plan (no GPUs, or no demand for a profile any of them has)."""
    states = [GpuState(i, g.model, g.layout, g.in_use) for i, g in enumerate(gpus)]
    known = {p.name for s in states for p in s.model.profiles}
    wanted = {k: v for k, v in demand.items() if profile_name(k, known) is not None}
    if not states or not wanted:
        return None
    plan = decide(make_snapshot(states, wanted), settings)
    changes: dict[str, dict[int, GpuTarget]] = {}
    for target in plan.targets:
        if target.reconfigured:
            where = gpus[target.index]
            changes.setdefault(where.node, {})[where.gpu] = target
    return NodesPlan(
        plan, tuple((name, tuple(sorted(c.items()))) for name, c in sorted(changes.items()))
    )
