"""Choosing which GPUs of a node a pod gets: widest ring first, then NUMA, then what is left.

For a request of ``size`` GPUs among the node's free ones, candidates are ranked by, in order:
1. the bottleneck bandwidth of the best ring over the set (the all-reduce speed);
2. fewer NUMA nodes spanned (CPU and NIC locality; the kubelet's device hints prefer it);
3. what remains for later pods (anti-stranding): for each power-of-two group size, largest
   first, the best ring bottleneck still achievable among the remaining free GPUs, and then how
   concentrated the remainder is per NUMA node; so a 1-GPU pod does not split an NVLink pair or
   the only whole NUMA node a later 4-GPU pod needs;
4. the total bandwidth of the ring; 5. the lowest GPU indices.
``numa_aligned`` keeps only sets inside one NUMA node (what single-numa-node admission needs).

Exact: every candidate set is scored while there are at most ``EXACT_MAX_CANDIDATES`` of them
(every 8-GPU node, and 16-GPU nodes for most sizes); each set's best-ring bottleneck is memoised
by bitmask. Larger domains: when every pair of free GPUs has the same bandwidth (NVSwitch, NVL72)
the bandwidth criteria are equal for every set, so choosing by NUMA packing is still exact;
otherwise a greedy choice is returned with ``exact=False`` and an upper bound on the bottleneck.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from gpuplane.topology.collective import best_ring
from gpuplane.topology.model import NodeTopology

EXACT_MAX_CANDIDATES = 20_000


@dataclass(frozen=True, slots=True)
class GpuPick:
    gpus: tuple[int, ...]
    bottleneck_gbps: float
    total_gbps: float
    numa_nodes: tuple[int, ...]
    exact: bool
    bound_gbps: float  # an upper bound on the bottleneck of any set (= bottleneck when exact)


class _Rings:
    """Memoised ring bottleneck/total per GPU subset of one topology."""

    def __init__(self, topo: NodeTopology) -> None:
        self.topo = topo
        self._cache: dict[int, tuple[float, float]] = {}

    def of(self, gpus: Sequence[int]) -> tuple[float, float]:
        key = sum(1 << g for g in gpus)
        hit = self._cache.get(key)
        if hit is None:
            ring = best_ring(self.topo, list(gpus))
            bottleneck = ring.bottleneck_gbps if len(gpus) > 1 else math.inf
            hit = (bottleneck, ring.total_gbps)
            self._cache[key] = hit
        return hit


@lru_cache(maxsize=64)
def _rings_for(topo: NodeTopology) -> _Rings:
    return _Rings(topo)


def _numa_of(topo: NodeTopology, g: int) -> int:
    numa = topo.gpus[g].numa
    return -1 if numa is None else int(numa)


def _remaining_quality(rings: _Rings, topo: NodeTopology, rest: list[int]) -> tuple[float, ...]:
    quality: list[float] = []
    k = 1
    while k * 2 <= len(rest):
        k *= 2
    while k >= 2:
        combos = itertools.combinations(rest, k)
        quality.append(max((rings.of(c)[0] for c in combos), default=0.0))
        k //= 2
    per_numa: dict[int, int] = {}
    for g in rest:
        per_numa[_numa_of(topo, g)] = per_numa.get(_numa_of(topo, g), 0) + 1
    quality.extend(sorted(per_numa.values(), reverse=True))
    return tuple(quality)


def _rank(rings: _Rings, topo: NodeTopology, free: list[int], cand: tuple[int, ...]) -> tuple:  # type: ignore[type-arg]
    bottleneck, total = rings.of(cand)
    numas = len({_numa_of(topo, g) for g in cand})
    rest = [g for g in free if g not in cand]
    return (
        bottleneck,
        -numas,
        _remaining_quality(rings, topo, rest),
        total,
        tuple(-g for g in cand),
    )


def _uniform(topo: NodeTopology, free: list[int]) -> bool:
    values = {topo.bandwidth_gbps[a][b] for a, b in itertools.combinations(free, 2)}
    return len(values) <= 1


def _numa_packing(
    topo: NodeTopology, free: list[int], size: int, required: list[int]
) -> tuple[int, ...]:
    """Uniform bandwidth: take the required GPUs, then fill from the NUMA nodes already touched,
    then from the smallest NUMA group that can finish the request (keeps big groups whole)."""
    chosen = list(required)
    groups: dict[int, list[int]] = {}
    for g in free:
        if g not in chosen:
            groups.setdefault(_numa_of(topo, g), []).append(g)
    while len(chosen) < size:
        touched = {_numa_of(topo, g) for g in chosen}
        need = size - len(chosen)
        order = sorted(
            groups.items(),
            key=lambda kv: (kv[0] not in touched, len(kv[1]) < need, len(kv[1]), kv[0]),
        )
        numa, members = order[0]
        take = members[:need]
        chosen.extend(take)
        groups[numa] = members[len(take) :]
        if not groups[numa]:
            del groups[numa]
    return tuple(sorted(chosen))


def pick_gpus(
    topo: NodeTopology,
    available: Sequence[int],
    size: int,
    *,
    required: Sequence[int] = (),
    numa_aligned: bool = False,
) -> GpuPick | None:
    """The best set of ``size`` GPUs among ``available`` (containing ``required``), or None."""
    free, req = sorted(set(available)), sorted(set(required))
    if size <= 0 or size > len(free) or not set(req) <= set(free) or len(req) > size:
        return None
    rings = _rings_for(topo)
    others = [g for g in free if g not in req]
    count = math.comb(len(others), size - len(req))
    if count <= EXACT_MAX_CANDIDATES:
        cands = [tuple(sorted((*req, *c))) for c in itertools.combinations(others, size - len(req))]
        if numa_aligned:
            cands = [c for c in cands if len({_numa_of(topo, g) for g in c}) == 1]
        if not cands:
            return None
        best = max(cands, key=lambda c: _rank(rings, topo, free, c))
        return _result(topo, rings, best, exact=True, bound=rings.of(best)[0])
    if _uniform(topo, free):
        chosen = _numa_packing(topo, free, size, req)
        if numa_aligned and len({_numa_of(topo, g) for g in chosen}) > 1:
            return None
        return _result(topo, rings, chosen, exact=True, bound=rings.of(chosen)[0])
    chosen = _greedy(topo, free, size, req)
    if numa_aligned and len({_numa_of(topo, g) for g in chosen}) > 1:
        return None
    return _result(topo, rings, chosen, exact=False, bound=_bound(topo, free, size))


def _greedy(topo: NodeTopology, free: list[int], size: int, req: list[int]) -> tuple[int, ...]:
    chosen = list(req) or [max(free, key=lambda g: sum(topo.bandwidth_gbps[g][h] for h in free))]
    while len(chosen) < size:
        nxt = max(
            (g for g in free if g not in chosen),
            key=lambda g: (min(topo.bandwidth_gbps[g][h] for h in chosen), -g),
        )
        chosen.append(nxt)
    return tuple(sorted(chosen))


def _bound(topo: NodeTopology, free: list[int], size: int) -> float:
    """A ring over ``size`` GPUs needs every member to have two links at least as wide as the
    bottleneck: the largest width w at which ``size`` GPUs each have >= 2 such neighbours."""
    widths = sorted(
        {topo.bandwidth_gbps[a][b] for a, b in itertools.combinations(free, 2)}, reverse=True
    )
    for w in widths:
        degree = [sum(1 for h in free if h != g and topo.bandwidth_gbps[g][h] >= w) for g in free]
        if sum(1 for d in degree if d >= min(2, size - 1)) >= size:
            return w
    return 0.0


def _result(
    topo: NodeTopology, rings: _Rings, gpus: tuple[int, ...], *, exact: bool, bound: float
) -> GpuPick:
    bottleneck, total = rings.of(gpus)
    numas = tuple(sorted({_numa_of(topo, g) for g in gpus}))
    return GpuPick(gpus, bottleneck, total, numas, exact, bound)
