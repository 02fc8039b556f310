"""GPU placement policies: the FGD paper's six (fgd-openb.md §3) and gpuplane's own.

Each policy scores, for one pod, the feasible nodes given as node-state arrays
(``types.NodeArrays``: cpu_left[N], mem_left[N], gpu_left[N, G], num_gpus[N], model ids[N],
tag_counts[N, 9]) and returns integer scores plus the GPU a share pod would take on each node
(``types.NodeScores``). The caller then normalises the scores of all feasible nodes
(``Policy.normalize``; only BestFit changes them) and picks the best node, ties to the highest
node priority (``gpus.select_position``). Policies are pure functions of the arrays except
Random, which owns its generator. The OpenB simulator (``scheduler.openb``) and the scheduling
framework's Score plugins call them the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.core.errors import InputError, Location
from gpuplane.core.rng import RngStreams
from gpuplane.scheduler.policies.bestfit import BestFitPolicy
from gpuplane.scheduler.policies.clustering import ClusteringPolicy
from gpuplane.scheduler.policies.dotprod import DotProdPolicy
from gpuplane.scheduler.policies.fgd import FgdPolicy
from gpuplane.scheduler.policies.gpuplane import (
    GpuplanePolicy,
    GpuplaneSettings,
    relief_weight_for,
)
from gpuplane.scheduler.policies.packing import PackingPolicy
from gpuplane.scheduler.policies.random import RandomPolicy
from gpuplane.scheduler.policies.types import Policy, TypicalPods

POLICY_NAMES = ("random", "dotprod", "clustering", "packing", "bestfit", "fgd", "gpuplane")
# Policies that read the trace's demand distribution (typical pods).
NEEDS_TYPICAL = frozenset({"fgd", "gpuplane"})


@dataclass(frozen=True, slots=True)
class PolicyContext:
    """What a policy may know besides the cluster state and the pod: the trace's typical pods
    (FGD family), the cluster's CPU and GPU capacity (gpuplane's CPU pressure; 0 = unknown,
    which turns gpuplane's relief credit off) and the seed of Random's own generator."""

    typical: TypicalPods | None = None
    seed: int = 0
    cluster_cpu_milli: int = 0
    cluster_gpus: int = 0


def make_policy(name: str, context: PolicyContext) -> Policy:
    """The policy called ``name``; InputError listing the valid names otherwise."""
    if name not in POLICY_NAMES:
        raise InputError(
            f"unknown policy {name!r}",
            expected="one of " + ", ".join(POLICY_NAMES),
            location=Location(field="--policy"),
        )
    if name in NEEDS_TYPICAL:
        if context.typical is None:
            raise ValueError(f"policy {name!r} needs the trace's typical pods")
        if name == "fgd":
            return FgdPolicy(context.typical)
        relief = relief_weight_for(context.typical, context.cluster_cpu_milli, context.cluster_gpus)
        return GpuplanePolicy(context.typical, GpuplaneSettings(relief_weight=relief))
    if name == "random":
        return RandomPolicy(RngStreams(context.seed).stream("openb.random-policy"))
    simple: dict[str, Policy] = {
        "dotprod": DotProdPolicy(),
        "clustering": ClusteringPolicy(),
        "packing": PackingPolicy(),
        "bestfit": BestFitPolicy(),
    }
    return simple[name]


__all__ = ["NEEDS_TYPICAL", "POLICY_NAMES", "PolicyContext", "make_policy"]
