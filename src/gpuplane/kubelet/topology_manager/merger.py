"""The hint merge (policy.go mergePermutation / HintMerger / iterateAllProviderTopologyHints)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpuplane.kubelet.topology_manager.bitmask import BitMask
from gpuplane.kubelet.topology_manager.hints import TopologyHint, max_of_min_affinity_counts
from gpuplane.kubelet.topology_manager.numa_info import NumaInfo

Comparator = Callable[[BitMask, BitMask], BitMask]


def merge_permutation(default: BitMask, permutation: Sequence[TopologyHint]) -> TopologyHint:
    """AND of every non-nil affinity (nil = all nodes); preferred only if every hint is and
    every non-nil affinity equals the first one ({0} pref + {0,1} pref -> {0} non-preferred)."""
    merged = default
    preferred = True
    first: BitMask | None = None
    for hint in permutation:
        if not hint.preferred:
            preferred = False
        if hint.affinity is None:
            continue
        merged = merged.and_(hint.affinity)
        if first is None:
            first = hint.affinity
        elif hint.affinity != first:
            preferred = False
    return TopologyHint(merged, preferred)


@dataclass(slots=True)
class HintMerger:
    numa: NumaInfo
    lists: Sequence[Sequence[TopologyHint]]
    comparator: Comparator
    best_non_preferred_count: int = -1
    best: TopologyHint | None = None

    @classmethod
    def make(
        cls, numa: NumaInfo, lists: Sequence[Sequence[TopologyHint]], comparator: Comparator
    ) -> HintMerger:
        return cls(numa, lists, comparator, max_of_min_affinity_counts(lists))

    def _compare_masks(self, current: TopologyHint, candidate: TopologyHint) -> TopologyHint:
        assert current.affinity is not None and candidate.affinity is not None
        if current.affinity == candidate.affinity:
            return current
        best = self.comparator(current.affinity, candidate.affinity)
        return current if best == current.affinity else candidate

    def compare(self, current: TopologyHint | None, candidate: TopologyHint) -> TopologyHint | None:
        assert candidate.affinity is not None
        if candidate.affinity.count() == 0:
            return current
        if current is None:
            return candidate
        if not current.preferred and candidate.preferred:
            return candidate
        if current.preferred and not candidate.preferred:
            return current
        if current.preferred and candidate.preferred:
            return self._compare_masks(current, candidate)
        return self._compare_non_preferred(current, candidate)

    def _compare_non_preferred(
        self, current: TopologyHint, candidate: TopologyHint
    ) -> TopologyHint:
        # Both non-preferred: steer toward the narrowest width any resource could live with.
        assert current.affinity is not None and candidate.affinity is not None
        b = self.best_non_preferred_count
        cur, cand = current.affinity.count(), candidate.affinity.count()
        if cur > b:
            return self._compare_masks(current, candidate)
        if cur == b:
            return current if cand != b else self._compare_masks(current, candidate)
        if cand > b:
            return current
        if cand == b:
            return candidate
        if cand > cur:
            return candidate
        if cand < cur:
            return current
        return self._compare_masks(current, candidate)

    def merge(self) -> TopologyHint:
        default = self.numa.default_affinity()
        for permutation in itertools.product(*self.lists):
            merged = merge_permutation(default, permutation)
            self.best = self.compare(self.best, merged)
        return self.best if self.best is not None else TopologyHint(default, False)
