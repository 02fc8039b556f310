"""How much all-reduce bandwidth a tensor-parallel group of k GPUs can get on one node.

For each group size this reports the best, the worst and the naive (GPUs 0..k-1) GPU set by the
bottleneck of their best ring. This is the explanation behind "will TP=4 fit, with what NVLink
bandwidth": on NVSwitch boxes every set is equal, on meshes and PCIe boxes the spread is large.
Exhaustive over all k-subsets while there are at most ``MAX_SUBSETS`` of them; otherwise only
aligned blocks (0..k-1, k..2k-1, ...) are compared, and the result says so.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from gpuplane.topology.collective import Ring, best_ring
from gpuplane.topology.model import NodeTopology

MAX_SUBSETS = 5000


@dataclass(frozen=True, slots=True)
class TpBandwidth:
    size: int
    best: Ring
    worst: Ring
    naive: Ring
    num_sets: int
    exhaustive: bool

    @property
    def spread(self) -> float:
        """best / worst bottleneck: how much the choice of GPUs matters for this size."""
        return self.best.bottleneck_gbps / self.worst.bottleneck_gbps


def tp_bandwidth(topo: NodeTopology, size: int) -> TpBandwidth:
    n = topo.num_gpus
    if not 2 <= size <= n:
        raise ValueError(f"group size {size} must be between 2 and {n} on {topo.name}")
    exhaustive = math.comb(n, size) <= MAX_SUBSETS
    if exhaustive:
        candidates = list(itertools.combinations(range(n), size))
    else:
        candidates = [tuple(range(s, s + size)) for s in range(0, n - size + 1, size)]
    rings = [best_ring(topo, c) for c in candidates]
    # max/min keep the first of equals, so ties resolve to the lowest GPU indices.
    best = max(rings, key=lambda r: r.bottleneck_gbps)
    worst = min(rings, key=lambda r: r.bottleneck_gbps)
    naive = best_ring(topo, range(size))
    return TpBandwidth(size, best, worst, naive, len(candidates), exhaustive)


def tp_sizes(num_gpus: int) -> list[int]:
    """Power-of-two group sizes a node can host (TP degrees are powers of two in practice)."""
    sizes, k = [], 2
    while k <= num_gpus:
        sizes.append(k)
        k *= 2
    return sizes
