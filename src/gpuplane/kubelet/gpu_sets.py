"""Choosing which GPUs of a node a pod gets, by the order of ``gpu_set_order``.

That module defines the ranking (bottleneck bandwidth of the widest ring, then path classes:
NUMA nodes spanned and pairs per link class, then stranding of what remains, then total ring
bandwidth, then the lowest indices). This one searches for the best set under it:

- exact: every candidate set is scored while there are at most ``EXACT_MAX_CANDIDATES`` of them
  (every 8-GPU node, and 16-GPU nodes for most sizes); subset scores are memoised by bitmask;
- larger domains where every pair of free GPUs has the same link and bandwidth (NVSwitch,
  NVL72): bottleneck, pair classes and the groups left are equal for every set, so choosing by
  NUMA packing is still exact;
- otherwise a greedy choice (widest, then tightest link to the GPUs chosen so far), returned
  with ``exact=False`` and an upper bound on the bottleneck.

``numa_aligned`` keeps only sets inside one NUMA node (what single-numa-node admission needs).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from gpuplane.kubelet.gpu_set_order import SetScores, choice_key, numa_of, scores_for
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


def _uniform(topo: NodeTopology, free: list[int]) -> bool:
    """Every free pair has the same link class and bandwidth."""
    cells = {
        (topo.links[a][b], topo.bandwidth_gbps[a][b]) for a, b in itertools.combinations(free, 2)
    }
    return len(cells) <= 1


def _numa_packing(
    topo: NodeTopology, free: list[int], size: int, required: list[int]
) -> tuple[int, ...]:
    """Uniform bandwidth: take the required GPUs, then fill from the NUMA nodes already touched,
    then from the smallest NUMA group that can finish the request (keeps big groups whole)."""
    chosen = list(required)
    groups: dict[int, list[int]] = {}
    for g in free:
        if g not in chosen:
            groups.setdefault(numa_of(topo, g), []).append(g)
    while len(chosen) < size:
        touched = {numa_of(topo, g) for g in chosen}
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
    scores = scores_for(topo)
    others = [g for g in free if g not in req]
    count = math.comb(len(others), size - len(req))
    if count <= EXACT_MAX_CANDIDATES:
        cands = [tuple(sorted((*req, *c))) for c in itertools.combinations(others, size - len(req))]
        if numa_aligned:
            cands = [c for c in cands if scores.of(c).num_numa == 1]
        if not cands:
            return None
        best = max(cands, key=lambda c: choice_key(scores, free, c))
        return _result(topo, scores, best, exact=True, bound=scores.of(best).bottleneck_gbps)
    if _uniform(topo, free):
        chosen = _numa_packing(topo, free, size, req)
        exact, bound = True, scores.of(chosen).bottleneck_gbps
    else:
        chosen = _greedy(topo, free, size, req)
        exact, bound = False, _bound(topo, free, size)
    if numa_aligned and scores.of(chosen).num_numa > 1:
        return None
    return _result(topo, scores, chosen, exact=exact, bound=bound)


def _greedy(topo: NodeTopology, free: list[int], size: int, req: list[int]) -> tuple[int, ...]:
    """Start from the required GPUs (or the best connected one); add the GPU whose slowest link
    to the chosen ones is widest, then whose farthest link class to them is nearest."""
    bw, links = topo.bandwidth_gbps, topo.links
    chosen = list(req) or [max(free, key=lambda g: sum(bw[g][h] for h in free))]
    while len(chosen) < size:
        nxt = max(
            (g for g in free if g not in chosen),
            key=lambda g: (
                min(bw[g][h] for h in chosen),
                -max(links[g][h].rank for h in chosen),
                -g,
            ),
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
    topo: NodeTopology, scores: SetScores, gpus: tuple[int, ...], *, exact: bool, bound: float
) -> GpuPick:
    score = scores.of(gpus)
    numas = tuple(sorted({numa_of(topo, g) for g in gpus}))
    return GpuPick(gpus, score.bottleneck_gbps, score.total_gbps, numas, exact, bound)
