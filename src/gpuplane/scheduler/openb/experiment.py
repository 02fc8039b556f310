"""The protocol for one (trace, policy) over seeds (fgd-openb.md §6): what the CLI and the
benchmark script call. Reads nothing itself: the caller loads the node and pod lists."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpuplane.scheduler.openb.metrics import frag_curve, unallocated_curve, value_at
from gpuplane.scheduler.openb.simulator import Progress, simulate
from gpuplane.scheduler.openb.trace import NodeTable, PodTable
from gpuplane.scheduler.openb.typical import typical_pods
from gpuplane.scheduler.openb.workload import TUNE_RATIO, make_workload
from gpuplane.scheduler.policies import NEEDS_TYPICAL, PolicyContext, make_policy
from gpuplane.scheduler.policies.types import FloatArray

PAPER_SEEDS = tuple(range(42, 52))


@dataclass(frozen=True, slots=True)
class SeedResult:
    seed: int
    unallocated_pct_at_100: float | None
    frag_pct_at_100: float | None
    num_arrivals: int
    num_failed: int
    wall_s: float
    unallocated_curve: FloatArray  # [131], index = arrived %
    frag_curve: FloatArray | None


@dataclass(frozen=True, slots=True)
class ProtocolResult:
    policy: str
    seeds: tuple[SeedResult, ...]

    @property
    def mean_at_100(self) -> float | None:
        values = [s.unallocated_pct_at_100 for s in self.seeds]
        clean = [v for v in values if v is not None]
        return statistics.fmean(clean) if clean and len(clean) == len(values) else None

    @property
    def sd_at_100(self) -> float | None:
        """Population sd (ddof = 0), as in fgd-openb.md §5's table."""
        values = [s.unallocated_pct_at_100 for s in self.seeds]
        clean = [v for v in values if v is not None]
        if not clean or len(clean) != len(values):
            return None
        return statistics.pstdev(clean)

    @property
    def wall_s(self) -> float:
        return sum(s.wall_s for s in self.seeds)


def run_seed(
    nodes: NodeTable,
    pods: PodTable,
    policy_name: str,
    seed: int,
    *,
    tune_ratio: float = TUNE_RATIO,
    track_frag: bool = False,
    progress: Progress | None = None,
) -> SeedResult:
    """One seed: workload, simulation, metrics."""
    typical = typical_pods(pods, nodes.model_names)
    needs_typical = policy_name in NEEDS_TYPICAL or track_frag
    context = PolicyContext(
        typical=typical,
        seed=seed,
        cluster_cpu_milli=int(nodes.cpu_milli.sum()),
        cluster_gpus=nodes.total_gpus,
    )
    policy = make_policy(policy_name, context)
    workload = make_workload(pods, nodes.num_nodes, nodes.total_gpus, seed, tune_ratio)
    run = simulate(
        nodes,
        pods,
        workload,
        policy,
        typical=typical if needs_typical else None,
        track_frag=track_frag,
        progress=progress,
    )
    unalloc = unallocated_curve(run.arrived_gpu_milli, run.used_gpu_milli, run.total_gpus)
    frag = (
        frag_curve(run.arrived_gpu_milli, run.frag_gpu_milli, run.total_gpus)
        if run.frag_gpu_milli is not None
        else None
    )
    return SeedResult(
        seed=seed,
        unallocated_pct_at_100=value_at(unalloc),
        frag_pct_at_100=value_at(frag) if frag is not None else None,
        num_arrivals=int(run.node.shape[0]),
        num_failed=run.num_failed,
        wall_s=run.wall_s,
        unallocated_curve=unalloc,
        frag_curve=frag,
    )


def run_protocol(
    nodes: NodeTable,
    pods: PodTable,
    policy_name: str,
    seeds: Sequence[int] = PAPER_SEEDS,
    *,
    tune_ratio: float = TUNE_RATIO,
    track_frag: bool = False,
    on_seed: Callable[[int], Progress | None] | None = None,
) -> ProtocolResult:
    """Every seed of one (trace, policy); ``on_seed(seed)`` may return a progress callback."""
    results = []
    for seed in seeds:
        progress = on_seed(seed) if on_seed is not None else None
        results.append(
            run_seed(
                nodes,
                pods,
                policy_name,
                seed,
                tune_ratio=tune_ratio,
                track_frag=track_frag,
                progress=progress,
            )
        )
    return ProtocolResult(policy=policy_name, seeds=tuple(results))
