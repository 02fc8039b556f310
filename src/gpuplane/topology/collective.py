"""Collective cost over a GPU set: the best ring and the time of a ring all-reduce.

A ring all-reduce moves ``2 (n-1)/n * S`` bytes through every GPU's outgoing link, one neighbour
after another, so its speed is set by the slowest hop of the ring (the bottleneck). Which ring
is chosen matters on meshes (DGX-1: a bad order crosses a SYS hop) and not at all on NVSwitch.

Finding the ring with the widest bottleneck is a bottleneck Hamiltonian-cycle problem. We try the
distinct pairwise bandwidths from the widest down and ask whether the GPUs can be closed into a
cycle using only links at least that wide; the first threshold that works is optimal. The cycle
test is an exact bitmask dynamic programme (Held-Karp reachability) up to ``EXACT_MAX_GPUS``;
beyond that a complete threshold graph is still exact, and other graphs fall back to a
greedy-plus-2-opt search whose result is marked ``exact=False``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from gpuplane.topology.model import NodeTopology

EXACT_MAX_GPUS = 16
# Per-hop latency of one ring step. NCCL's measured small-message ring latency is a few
# microseconds per hop on NVLink; a single stated default, overridable per call.
DEFAULT_HOP_LATENCY_S = 5e-6
# The largest all-reduce message the commands and the fit sweep accept: 1 PiB per GPU, far past
# any GPU's memory, and small enough that the ring-time arithmetic stays finite.
MAX_MESSAGE_MIB = 2.0**30


@dataclass(frozen=True, slots=True)
class Ring:
    """A ring order over GPUs, its slowest hop and the sum of its hops (per direction, GB/s)."""

    order: tuple[int, ...]
    bottleneck_gbps: float
    total_gbps: float
    exact: bool

    @property
    def size(self) -> int:
        return len(self.order)


@dataclass(frozen=True, slots=True)
class AllReduceCost:
    ring: Ring
    message_bytes: int
    time_s: float
    algbw_gbps: float
    busbw_gbps: float


def ring_hops(order: Sequence[int]) -> list[tuple[int, int]]:
    if len(order) < 2:
        return []
    if len(order) == 2:
        return [(order[0], order[1])]
    return [(order[i], order[(i + 1) % len(order)]) for i in range(len(order))]


def _ring_of(order: Sequence[int], bw: Sequence[Sequence[float]], exact: bool) -> Ring:
    hops = ring_hops(order)
    if not hops:
        return Ring(tuple(order), float("inf"), 0.0, exact)
    widths = [bw[a][b] for a, b in hops]
    return Ring(tuple(order), min(widths), round(sum(widths), 6), exact)


def _hamiltonian_cycle(adj: list[int], n: int) -> list[int] | None:
    """A Hamiltonian cycle through vertices 0..n-1 of the bitset graph ``adj``, or None.

    ``reach[mask]`` is the set of vertices v such that some path starts at 0, visits exactly
    ``mask`` and ends at v; the cycle exists when a full-mask end vertex is adjacent to 0.
    """
    if n <= 2:
        return list(range(n)) if n < 2 or adj[0] & 2 else None
    full = (1 << n) - 1
    reach = [0] * (1 << n)
    reach[1] = 1
    for mask in range(1, full + 1, 2):  # every path contains vertex 0
        ends = reach[mask]
        while ends:
            v = (ends & -ends).bit_length() - 1
            ends &= ends - 1
            nxt = adj[v] & ~mask
            while nxt:
                w = (nxt & -nxt).bit_length() - 1
                nxt &= nxt - 1
                reach[mask | (1 << w)] |= 1 << w
    closing = reach[full] & adj[0]
    if not closing:
        return None
    # Walk back from an end vertex that closes the cycle.
    path = [(closing & -closing).bit_length() - 1]
    mask = full
    while len(path) < n:
        cur = path[-1]
        prev_mask = mask & ~(1 << cur)
        cands = reach[prev_mask] & adj[cur] if prev_mask != 1 else 1
        prev = (cands & -cands).bit_length() - 1
        path.append(prev)
        mask = prev_mask
    return path[::-1]


def greedy_ring_order(bw: list[list[float]], n: int) -> list[int]:
    """Heuristic widest ring: nearest-widest neighbour, then 2-opt on the bottleneck."""
    order, left = [0], set(range(1, n))
    while left:
        cur = order[-1]
        nxt = max(sorted(left), key=lambda j: bw[cur][j])
        order.append(nxt)
        left.remove(nxt)
    improved = True
    while improved:
        improved = False
        base = min(bw[order[i]][order[(i + 1) % n]] for i in range(n))
        for i, j in itertools.combinations(range(1, n), 2):
            cand = order[:i] + order[i : j + 1][::-1] + order[j + 1 :]
            if min(bw[cand[k]][cand[(k + 1) % n]] for k in range(n)) > base:
                order, improved = cand, True
                break
    return order


def best_ring(topo: NodeTopology, gpus: Sequence[int]) -> Ring:
    """The ring over ``gpus`` with the widest bottleneck (GPU indices of ``topo``)."""
    members = sorted(set(gpus))
    if len(members) != len(gpus):
        raise ValueError(f"GPU set {list(gpus)} repeats a GPU")
    for g in members:
        if not 0 <= g < topo.num_gpus:
            raise ValueError(f"GPU {g} is not on {topo.name} (it has {topo.num_gpus})")
    n = len(members)
    bw = [[topo.bandwidth_gbps[a][b] for b in members] for a in members]
    if n <= 2:
        return _ring_of(members, topo.bandwidth_gbps, True)
    for threshold in sorted({bw[i][j] for i in range(n) for j in range(i + 1, n)}, reverse=True):
        adj = [sum(1 << j for j in range(n) if j != i and bw[i][j] >= threshold) for i in range(n)]
        complete = all(a.bit_count() == n - 1 for a in adj)
        if complete:
            return _ring_of(members, topo.bandwidth_gbps, True)
        if n <= EXACT_MAX_GPUS:
            cycle = _hamiltonian_cycle(adj, n)
            if cycle is not None:
                return _ring_of([members[k] for k in cycle], topo.bandwidth_gbps, True)
    order = greedy_ring_order(bw, n)
    return _ring_of([members[k] for k in order], topo.bandwidth_gbps, n <= EXACT_MAX_GPUS)


def best_ring_bruteforce(topo: NodeTopology, gpus: Sequence[int]) -> Ring:
    """Reference implementation: every ring order (n <= 9), widest bottleneck wins."""
    members = sorted(gpus)
    if len(members) <= 2:
        return _ring_of(members, topo.bandwidth_gbps, True)
    best: Ring | None = None
    first, rest = members[0], members[1:]
    for perm in itertools.permutations(rest):
        ring = _ring_of((first, *perm), topo.bandwidth_gbps, True)
        if best is None or ring.bottleneck_gbps > best.bottleneck_gbps:
            best = ring
    assert best is not None
    return best


def ring_allreduce_cost(
    ring: Ring, message_bytes: int, *, hop_latency_s: float = DEFAULT_HOP_LATENCY_S
) -> AllReduceCost:
    """Time of a ring all-reduce of ``message_bytes`` per GPU: 2(n-1) steps of S/n bytes each.

    ``algbw`` = S / t and ``busbw`` = algbw * 2(n-1)/n, as nccl-tests report them.
    """
    if message_bytes < 0:
        raise ValueError("message size must be >= 0")
    n = ring.size
    if n < 2 or message_bytes == 0:
        return AllReduceCost(ring, message_bytes, 0.0, 0.0, 0.0)
    steps = 2 * (n - 1)
    transfer_s = steps * (message_bytes / n) / (ring.bottleneck_gbps * 1e9)
    time_s = transfer_s + steps * hop_latency_s
    algbw = message_bytes / time_s / 1e9
    return AllReduceCost(ring, message_bytes, time_s, algbw, algbw * steps / n)
