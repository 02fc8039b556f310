"""NodeResourceTopologyMatch's LeastNUMANodes scoring strategy (least_numa.go).

A node scores by how few NUMA zones the pod's containers need: the smallest combination of zones
whose summed available resources fit the request, preferring the combination with the smallest
average NUMA distance; score = 100 - count x 12 (+6 when that combination has the minimum average
distance among all combinations of its size). Container scope takes the worst container (zones
are charged container by container, in init-then-app order); pod scope the pod's effective
request. A pod that needs no NUMA resource scores 100.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from gpuplane.scheduler.plugins.noderesourcetopology.numa_zones import (
    HIGHEST_NUMA_ID,
    MAX_DISTANCE,
    NumaZone,
    suitable,
)

UNIT = 100 // HIGHEST_NUMA_ID


def _only_non_numa(zones: Sequence[NumaZone], requests: Mapping[str, int]) -> bool:
    return not any(r in z.resources for z in zones for r in requests)


def _avg_distance(zones: Sequence[NumaZone], combo: Sequence[int]) -> float:
    if not combo:
        return float(MAX_DISTANCE)
    total = 0
    for a in combo:
        for b in combo:
            total += zones[a].costs.get(zones[b].numa, MAX_DISTANCE)
    return total / (len(combo) * len(combo))


def _fits(
    qos: str, requests: Mapping[str, int], zones: Sequence[NumaZone], combo: Sequence[int]
) -> bool:
    for r, q in requests.items():
        if q == 0:
            continue
        amount = sum(zones[i].resources.get(r, 0) for i in combo)
        if not suitable(qos, r, q, amount):
            return False
    return True


def numa_nodes_required(
    qos: str, zones: Sequence[NumaZone], requests: Mapping[str, int]
) -> tuple[tuple[int, ...] | None, bool]:
    """(indices of the smallest fitting zone combination, whether it has the minimum distance)."""
    for size in range(1, len(zones) + 1):
        combos = list(itertools.combinations(range(len(zones)), size))
        min_avg = min(_avg_distance(zones, c) for c in combos)
        best: tuple[int, ...] | None = None
        best_distance = 256.0
        for combo in combos:
            if not _fits(qos, requests, zones, combo):
                continue
            d = _avg_distance(zones, combo)
            if d == min_avg:
                return combo, True
            if d < best_distance:
                best, best_distance = combo, d
        if best is not None:
            return best, False
    return None, False


def _subtract(zones: Sequence[NumaZone], combo: Sequence[int], requests: Mapping[str, int]) -> None:
    """subtractFromNUMAs: take each request from the chosen zones in order until it is met."""
    for r, q in requests.items():
        left = q
        for i in combo:
            if left <= 0:
                break
            have = zones[i].resources.get(r)
            if have is None:
                continue
            take = min(have, left)
            zones[i].resources[r] = have - take
            left -= take


def normalize(count: int, min_distance: bool) -> int:
    score = 100 - count * UNIT
    return score + UNIT // 2 if min_distance else score


def least_numa_score(
    qos: str, zones: list[NumaZone], per_container: Sequence[Mapping[str, int]]
) -> int:
    """Container scope: ``per_container`` in admission order; pod scope: one entry."""
    worst = 0
    all_min = True
    for requests in per_container:
        if _only_non_numa(zones, requests):
            continue
        combo, is_min = numa_nodes_required(qos, zones, requests)
        if combo is None:
            return 0
        all_min = all_min and is_min
        worst = max(worst, len(combo))
        _subtract(zones, combo, requests)
    if worst == 0:
        return 100
    return normalize(worst, all_min)
