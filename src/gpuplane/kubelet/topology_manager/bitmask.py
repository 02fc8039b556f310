"""NUMA-node bitmasks (topologymanager/bitmask/bitmask.go): a uint64, bits 0..63."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from gpuplane.core.errors import InputError

MAX_BITS = 64


@dataclass(frozen=True, slots=True, order=False)
class BitMask:
    bits: int = 0

    @classmethod
    def of(cls, nodes: Iterable[int]) -> BitMask:
        value = 0
        for n in nodes:
            if not 0 <= n < MAX_BITS:
                raise InputError(f"NUMA node {n}", expected="bit number must be in range 0-63")
            value |= 1 << n
        return cls(value)

    def nodes(self) -> list[int]:
        return [i for i in range(MAX_BITS) if self.bits >> i & 1]

    def count(self) -> int:
        return self.bits.bit_count()

    def is_empty(self) -> bool:
        return self.bits == 0

    def and_(self, other: BitMask) -> BitMask:
        return BitMask(self.bits & other.bits)

    def is_less_than(self, other: BitMask) -> bool:
        """Integer comparison: lower-numbered NUMA nodes win (bitmask.IsLessThan)."""
        return self.bits < other.bits

    def is_narrower_than(self, other: BitMask) -> bool:
        """Fewer NUMA nodes, or as many and ``is_less_than`` (bitmask.IsNarrowerThan)."""
        if self.count() == other.count():
            return self.is_less_than(other)
        return self.count() < other.count()


def iterate_bitmasks(nodes: list[int]) -> Iterator[BitMask]:
    """Every non-empty subset: by size 1..n, then lexicographically (bitmask.IterateBitMasks)."""
    ordered = sorted(nodes)
    for size in range(1, len(ordered) + 1):
        for combo in itertools.combinations(ordered, size):
            yield BitMask.of(combo)
