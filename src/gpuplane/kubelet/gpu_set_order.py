"""The order gpuplane ranks candidate GPU sets by: defined here, once, and used by ``gpu_sets``.

For a pod asking for ``size`` GPUs among a node's free GPUs F, a candidate set S beats another
at the first of these criteria where they differ (``choice_key`` builds the comparable key):

1. **Bottleneck**: the bandwidth of the slowest hop of the widest ring over S (GB/s per
   direction), the speed of a ring all-reduce (``topology.collective.best_ring``).
2. **Path classes**: first the number of NUMA nodes S spans (fewer wins; the kubelet's device
   hints prefer the narrowest set too), then S's GPU pairs counted per ``nvidia-smi topo -m``
   class from the farthest down: fewer SYS pairs, then fewer NODE, PHB, PXB and PIX pairs
   (what is left is NVLink, the tightest).
3. **Stranding**: what F - S keeps for later pods. For each power-of-two group size k, largest
   first, the rest is cut into groups of k greedily: each time the best group left by
   (bottleneck, pair classes), ties to the lowest indices. The groups' keys, in the order
   taken, are compared. Then the free GPUs per NUMA node, the largest count first.
4. **Total**: the sum of the ring's hop bandwidths.
5. **Lowest GPU indices**.

Why classes right after bandwidth: the bandwidth model gives PIX, PXB and PHB the same PCIe link
rate, as NCCL's does (a path runs at its slowest link), so bandwidth cannot order them, yet the
closer path is better. A transfer under one switch never climbs to the root complex. NCCL
sends GPU peer-to-peer traffic directly only up to PXB by default (PHB and farther bounce
through host memory, except on AMD CPUs with at most two GPUs), and charges 6/5 of the
bandwidth to peer traffic through an Intel root complex (NCCL ``src/graph/paths.cc``
``ncclTopoCheckP2p``, ``src/graph/search.cc`` ``followPath``, ``INTEL_P2P_OVERHEAD`` in
``src/graph/topo.h``). go-gpuallocator's pair scores rank SingleSwitch > MultiSwitch >
HostBridge > SameCPU > CrossCPU (``shared/reference/gpuallocator.md``). Those effects depend on
the CPU and driver settings a ``topo -m`` file does not state, so the class breaks bandwidth
ties instead of scaling the bandwidth. Every pair counts, not only the ring's hops, because
NCCL trees and all-to-all traffic use the other pairs too.

Why a whole greedy cut in 3 and not only the best group left: on the PLX capture
(``pcie-8gpu-plx-switches-dual-socket``, PIX pairs 0-1, 2-3, 4-5, 6-7) with GPUs 3 and 7 busy, a
1-GPU pod given GPU 0 leaves one PIX and one PXB pair. Given GPU 2 (or 6), it leaves two PIX
pairs. The best pair left is PIX either way.

On an NVSwitch domain every pair is the same NVLink, so only NUMA spans and NUMA counts differ
between sets. Subset scores are memoised by bitmask per topology (``scores_for``): the same
subsets come back in every call of a scheduler run.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from gpuplane.topology.collective import best_ring
from gpuplane.topology.links import Link, LinkClass
from gpuplane.topology.model import NodeTopology

# The PCIe and SMP classes counted in criterion 2, farthest first (NVLink is not counted).
COUNTED_CLASSES: tuple[LinkClass, ...] = (
    LinkClass.SYS,
    LinkClass.NODE,
    LinkClass.PHB,
    LinkClass.PXB,
    LinkClass.PIX,
)
_SLOT_OF_RANK: dict[int, int] = {Link(c).rank: k for k, c in enumerate(COUNTED_CLASSES)}

# Pair counts per class, negated so that a larger key is a tighter set: (-SYS, ..., -PIX).
ClassKey = tuple[int, ...]
GroupKey = tuple[float, ClassKey]  # (bottleneck, class key): a group's quality in criterion 3
StrandingKey = tuple[tuple[tuple[GroupKey, ...], ...], tuple[int, ...]]
ChoiceKey = tuple[float, int, ClassKey, StrandingKey, float, tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class SetScore:
    """What the order needs to know about one GPU subset."""

    bottleneck_gbps: float  # math.inf for a single GPU (no ring)
    total_gbps: float
    num_numa: int
    pair_classes: tuple[int, ...]  # pairs per class of COUNTED_CLASSES
    group_key: GroupKey


def numa_of(topo: NodeTopology, gpu: int) -> int:
    numa = topo.gpus[gpu].numa
    return -1 if numa is None else int(numa)


class SetScores:
    """Memoised :class:`SetScore` per GPU subset (bitmask) of one topology."""

    def __init__(self, topo: NodeTopology) -> None:
        self.topo = topo
        n = topo.num_gpus
        self._slot = [
            [_SLOT_OF_RANK.get(topo.links[a][b].rank, -1) for b in range(n)] for a in range(n)
        ]
        self._numa = [numa_of(topo, g) for g in range(n)]
        self._cache: dict[int, SetScore] = {}

    def of(self, gpus: Iterable[int]) -> SetScore:
        return self.of_mask(sum(1 << g for g in gpus))

    def of_mask(self, mask: int) -> SetScore:
        hit = self._cache.get(mask)
        if hit is None:
            hit = self._score([g for g in range(self.topo.num_gpus) if mask >> g & 1])
            self._cache[mask] = hit
        return hit

    def _score(self, gpus: list[int]) -> SetScore:
        ring = best_ring(self.topo, gpus)
        bottleneck = ring.bottleneck_gbps if len(gpus) > 1 else math.inf
        counts = [0] * len(COUNTED_CLASSES)
        for a, b in itertools.combinations(gpus, 2):
            slot = self._slot[a][b]
            if slot >= 0:
                counts[slot] += 1
        classes = tuple(counts)
        return SetScore(
            bottleneck_gbps=bottleneck,
            total_gbps=ring.total_gbps,
            num_numa=len({self._numa[g] for g in gpus}),
            pair_classes=classes,
            group_key=(bottleneck, tuple(-c for c in classes)),
        )

    def numa_counts(self, gpus: Iterable[int]) -> tuple[int, ...]:
        """Free GPUs per NUMA node, the largest count first."""
        per_numa: dict[int, int] = {}
        for g in gpus:
            per_numa[self._numa[g]] = per_numa.get(self._numa[g], 0) + 1
        return tuple(sorted(per_numa.values(), reverse=True))


@lru_cache(maxsize=64)
def scores_for(topo: NodeTopology) -> SetScores:
    return SetScores(topo)


def greedy_groups(scores: SetScores, rest: list[int], k: int) -> tuple[GroupKey, ...]:
    """Criterion 3 for one group size: cut ``rest`` (sorted) into groups of ``k``, each time
    the best group left (ties to the lowest indices); the groups' keys in the order taken."""
    left = list(rest)
    keys: list[GroupKey] = []
    while len(left) >= k:
        masks = [sum(bits) for bits in itertools.combinations([1 << g for g in left], k)]
        # max keeps the first of equals: combinations come in lexicographic order
        best = max(masks, key=lambda mask: scores.of_mask(mask).group_key)
        keys.append(scores.of_mask(best).group_key)
        left = [g for g in left if not best >> g & 1]
    return tuple(keys)


def stranding_key(scores: SetScores, rest: list[int]) -> StrandingKey:
    """Criterion 3: greedy groups per power-of-two size (largest first), then NUMA counts."""
    per_size: list[tuple[GroupKey, ...]] = []
    k = 1
    while k * 2 <= len(rest):
        k *= 2
    while k >= 2:
        per_size.append(greedy_groups(scores, rest, k))
        k //= 2
    return tuple(per_size), scores.numa_counts(rest)


def choice_key(scores: SetScores, free: list[int], cand: tuple[int, ...]) -> ChoiceKey:
    """The full order for candidate ``cand`` (sorted) among ``free`` (sorted): larger is better."""
    score = scores.of(cand)
    rest = [g for g in free if g not in cand]
    return (
        score.bottleneck_gbps,
        -score.num_numa,
        score.group_key[1],
        stranding_key(scores, rest),
        score.total_gbps,
        tuple(-g for g in cand),
    )
