"""Topology domains: the values one node label takes over the nodes, as integer ids per node, so
that PodTopologySpread and InterPodAffinity count per (topology key, value) pair with numpy.

kube-scheduler keys its counts by ``topologyPair{key, node.Labels[key]}``; a node without the
label looks up the value "" there, so such a node shares the pair of a node whose label is
present and empty. ``ids`` follows that rule; ``present`` says which nodes have the label.
Computed once per snapshot generation (labels change only with it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.static_cache import StaticCache
from gpuplane.scheduler.framework.types import BoolArray, IntArray


@dataclass(frozen=True, slots=True)
class KeyDomains:
    """Node ``i`` is in domain ``ids[i]``, the pair ``(key, values[ids[i]])``."""

    key: str
    ids: IntArray
    present: BoolArray
    values: tuple[str, ...]
    index: Mapping[str, int]

    @property
    def num_domains(self) -> int:
        return len(self.values)


def _domains(snap: ClusterSnapshot, key: str) -> KeyDomains:
    index: dict[str, int] = {}
    ids = np.empty(snap.num_nodes, dtype=np.int64)
    present = np.zeros(snap.num_nodes, dtype=bool)
    for i, labels in enumerate(snap.node_labels):
        value = labels.get(key)
        present[i] = value is not None
        ids[i] = index.setdefault(value if value is not None else "", len(index))
    return KeyDomains(key, ids, present, tuple(index), index)


class DomainCache:
    """Owner of one plugin's domains per topology key (mutable, per snapshot generation)."""

    def __init__(self) -> None:
        self._cache: StaticCache[KeyDomains] = StaticCache()

    def get(self, snap: ClusterSnapshot, key: str) -> KeyDomains:
        return self._cache.get(snap, key, lambda: _domains(snap, key))


def pair_counts(domains: KeyDomains, counts: Mapping[tuple[str, str], int]) -> IntArray:
    """A per-domain array from counts keyed by (topology key, value); 0 for pairs not given."""
    out = np.zeros(domains.num_domains, dtype=np.int64)
    for (key, value), count in counts.items():
        if key == domains.key:
            d = domains.index.get(value)
            if d is not None:
                out[d] = count
    return out
