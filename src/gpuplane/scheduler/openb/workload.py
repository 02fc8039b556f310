"""One seed's workload: arrival order, tuned demand and node priority (fgd-openb.md §2 steps 2-4).

Own-RNG mode: the simulator's steps with one ``numpy`` generator seeded by the seed, drawn in the
simulator's order: shuffle the name-sorted pods, tune the total GPU demand to ``tune_ratio`` x
the cluster's GPUs, then a random permutation of the name-sorted nodes that fixes every tie of
the run (``policies.gpus.select_position``). Every policy gets the same workload for a seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuplane.scheduler.openb.trace import PodTable
from gpuplane.scheduler.policies.types import MILLI_PER_GPU, IntArray

TUNE_RATIO = 1.3


@dataclass(frozen=True, slots=True)
class Workload:
    """``arrivals``: rows of the name-sorted pod table, in arrival order (resampled copies
    repeat rows). ``node_rank[n]``: priority of node n, 0 first."""

    seed: int
    arrivals: IntArray
    node_rank: IntArray


def make_workload(
    pods: PodTable, num_nodes: int, total_gpus: int, seed: int, tune_ratio: float = TUNE_RATIO
) -> Workload:
    rng = np.random.default_rng(seed)
    order = [int(i) for i in rng.permutation(pods.num_pods)]
    arrivals = tune_demand(order, pods, tune_ratio * float(total_gpus * MILLI_PER_GPU), rng)
    node_rank = rng.permutation(num_nodes).astype(np.int64)
    return Workload(seed=seed, arrivals=np.array(arrivals, dtype=np.int64), node_rank=node_rank)


def tune_demand(
    order: list[int], pods: PodTable, target_milli: float, rng: np.random.Generator
) -> list[int]:
    """TunePodsByNodeTotalResource: delete uniformly random pods while the demand is above the
    target; or append uniform draws from the name-sorted list until the first draw that would
    overshoot. The simulator checks that overshoot with the pod's per-GPU milli, not its total,
    and CPU-only draws never stop it; both quirks are kept. ``target_milli <= 0``: no tuning."""
    total = pods.total_gpu_milli
    demand = int(total[order].sum()) if order else 0
    arrivals = list(order)
    if target_milli <= 0 or float(demand) == target_milli:
        return arrivals
    if float(demand) > target_milli:
        while float(demand) > target_milli:
            victim = int(rng.integers(len(arrivals)))
            demand -= int(total[arrivals.pop(victim)])
        return arrivals
    while True:
        draw = int(rng.integers(pods.num_pods))
        if float(demand + int(pods.gpu_milli[draw])) > target_milli:
            return arrivals
        demand += int(total[draw])
        arrivals.append(draw)
