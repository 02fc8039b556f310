"""NUMA nodes and their distances (numa_info.go): the Narrowest and Closest comparators."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpuplane.kubelet.topology_manager.bitmask import BitMask


@dataclass(frozen=True, slots=True)
class NumaInfo:
    nodes: tuple[int, ...]
    distances: Mapping[int, Sequence[int]] | None = None

    def default_affinity(self) -> BitMask:
        return BitMask.of(self.nodes)

    def narrowest(self, m1: BitMask, m2: BitMask) -> BitMask:
        return m1 if m1.is_narrower_than(m2) else m2

    def _average_distance(self, mask: BitMask) -> float:
        assert self.distances is not None
        nodes = mask.nodes()
        total = sum(self.distances[i][j] for i in nodes for j in nodes)
        return total / (len(nodes) ** 2)

    def closest(self, m1: BitMask, m2: BitMask) -> BitMask:
        """Fewer nodes first; for equal counts the smaller average pairwise distance (i = j
        terms included); equal averages -> the integer-smaller mask."""
        if m1.count() != m2.count():
            return self.narrowest(m1, m2)
        d1, d2 = self._average_distance(m1), self._average_distance(m2)
        if d1 == d2:
            return m1 if m1.is_less_than(m2) else m2
        return m1 if d1 < d2 else m2
