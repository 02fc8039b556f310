"""NVIDIA go-gpuallocator's best-effort policy (what the k8s-device-plugin returns from
GetPreferredAllocation for full GPUs), for comparison with gpuplane's GPU set choice.

Behaviour described in shared/reference/gpuallocator.md (go-gpuallocator @ 876e7b7):
- pair score = PCIe-level score (CrossCPU 10, SameCPU 20, HostBridge 30, MultiSwitch 40,
  SingleSwitch 50, SameBoard 60) + 100 per NVLink, NVLinks counted by matching the remote PCI
  bus id to the peer GPU, so on NVSwitch systems no pair gets NVLink credit (its blind spot);
- enumerate every partition of the available GPUs (index order, padded to a multiple of the
  size, padding all in one group) into groups of ``size``; keep partitions with a pad-free
  group holding every required GPU; the partition with the highest total score wins (first
  found on ties); in it, the best-scoring group holding the required GPUs is returned.
Enumeration grows fast; like the real code it is meant for <= 8-ish GPUs.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

from gpuplane.topology.links import LinkClass
from gpuplane.topology.model import NodeTopology

_PCIE_SCORE = {
    LinkClass.SYS: 10,
    LinkClass.NODE: 20,
    LinkClass.PHB: 30,
    LinkClass.PXB: 40,
    LinkClass.PIX: 50,
}


def pair_score(topo: NodeTopology, a: int, b: int) -> int:
    if a == b:
        return 0
    link = topo.gpu_link(a, b)
    if link.is_nvlink:
        if topo.nvswitch:
            # Remote endpoint is the NVSwitch: no NVLink credit; NVML's common ancestor for GPUs
            # under different switches of one socket is NODE-level on HGX boards.
            return _PCIE_SCORE[LinkClass.NODE] if _same_numa(topo, a, b) else 10
        # Direct NVLink: the PCIe path is not visible in topo -m once NV# is printed; same
        # socket GPUs on DGX-1 share a host bridge or socket, which the link class cannot tell.
        return 100 * link.num_nvlinks + (20 if _same_numa(topo, a, b) else 10)
    return _PCIE_SCORE.get(link.cls, 0)


def _same_numa(topo: NodeTopology, a: int, b: int) -> bool:
    return topo.gpus[a].numa is not None and topo.gpus[a].numa == topo.gpus[b].numa


def set_score(topo: NodeTopology, group: Sequence[int | None]) -> int:
    real = [g for g in group if g is not None]
    return sum(pair_score(topo, a, b) for a, b in itertools.combinations(real, 2))


def _partitions(items: list[int | None], size: int) -> Iterator[list[tuple[int | None, ...]]]:
    if not items:
        yield []
        return
    head, rest = items[0], items[1:]
    for combo in itertools.combinations(range(len(rest)), size - 1):
        group = (head, *(rest[i] for i in combo))
        pads = sum(1 for g in group if g is None)
        if pads and pads != items.count(None):
            continue  # a group holds either no padding or all of it
        left = [x for i, x in enumerate(rest) if i not in combo]
        for tail in _partitions(left, size):
            yield [group, *tail]


def best_effort(
    topo: NodeTopology, available: Sequence[int], required: Sequence[int], size: int
) -> list[int]:
    avail = sorted(set(available))
    req = set(required)
    if size <= 0 or len(avail) < size or len(req) > size or not req <= set(avail):
        return []
    if size == 1:
        # Every device is its own partition, all score 0: the first one holding the requirement.
        return [next(d for d in avail if not req or d in req)]
    pad = (-len(avail)) % size
    items: list[int | None] = [*avail, *([None] * pad)]
    best: list[tuple[int | None, ...]] | None = None
    best_score = -1
    for partition in _partitions(items, size):
        holders = [g for g in partition if None not in g and req <= set(g)]
        if not holders:
            continue
        score = sum(set_score(topo, g) for g in partition)
        if score > best_score:
            best, best_score = partition, score
    if best is None:
        return []
    groups = [g for g in best if None not in g and req <= set(g)]
    chosen = max(groups, key=lambda g: set_score(topo, g))  # first of equals
    return sorted(g for g in chosen if g is not None)
