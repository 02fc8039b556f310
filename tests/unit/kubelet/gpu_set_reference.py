"""A brute-force reference for the GPU set order (``gpuplane.kubelet.gpu_set_order``).

Written from the order's definition, not from its code: rings by trying every order
(``best_ring_bruteforce``), pair classes by counting labels, stranding groups by scanning every
combination. ``best_keys`` scores every candidate set; the pick must reach the maximum.

The key stops after stranding: the total ring bandwidth (criterion 4) depends on which of the
equally wide rings a search returns, and the last criterion (lowest indices) only breaks ties.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence

from gpuplane.topology.collective import best_ring_bruteforce
from gpuplane.topology.model import NodeTopology

FARTHEST_FIRST = ("SYS", "NODE", "PHB", "PXB", "PIX")

Group = tuple[float, tuple[int, ...]]
RefKey = tuple[float, int, tuple[int, ...], tuple[tuple[tuple[Group, ...], ...], tuple[int, ...]]]


class Reference:
    """The order's key per candidate, with brute-force ring bottlenecks memoised per set."""

    def __init__(self, topo: NodeTopology) -> None:
        self.topo = topo
        self._bottleneck: dict[frozenset[int], float] = {}

    def bottleneck(self, gpus: Sequence[int]) -> float:
        key = frozenset(gpus)
        if key not in self._bottleneck:
            ring = best_ring_bruteforce(self.topo, sorted(key))
            self._bottleneck[key] = ring.bottleneck_gbps if len(key) > 1 else math.inf
        return self._bottleneck[key]

    def numa(self, gpu: int) -> int:
        numa = self.topo.gpus[gpu].numa
        return -1 if numa is None else int(numa)

    def classes(self, gpus: Sequence[int]) -> tuple[int, ...]:
        """Minus the number of pairs per class, farthest class first."""
        labels = Counter(self.topo.links[a][b].label for a, b in itertools.combinations(gpus, 2))
        return tuple(-labels[c] for c in FARTHEST_FIRST)

    def group(self, gpus: Sequence[int]) -> Group:
        return (self.bottleneck(gpus), self.classes(gpus))

    def groups(self, rest: list[int], k: int) -> tuple[Group, ...]:
        taken: list[Group] = []
        left = sorted(rest)
        while len(left) >= k:
            best = tuple(left[:k])  # the first combination
            for combo in itertools.combinations(left, k):
                if self.group(combo) > self.group(best):
                    best = combo
            taken.append(self.group(best))
            left = [g for g in left if g not in best]
        return tuple(taken)

    def key(self, free: Sequence[int], cand: Sequence[int]) -> RefKey:
        rest = [g for g in free if g not in cand]
        sizes = [2**p for p in range(len(rest).bit_length() - 1, 0, -1)]
        per_numa = Counter(self.numa(g) for g in rest)
        return (
            self.bottleneck(cand),
            -len({self.numa(g) for g in cand}),
            self.classes(cand),
            (
                tuple(self.groups(rest, k) for k in sizes),
                tuple(sorted(per_numa.values(), reverse=True)),
            ),
        )

    def best_key(self, free: Sequence[int], size: int) -> RefKey:
        return max(self.key(free, c) for c in itertools.combinations(sorted(free), size))
