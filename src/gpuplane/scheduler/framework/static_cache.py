"""Per-node results that depend only on node labels, taints and cordoning, and on some part of
the pod (its tolerations, its selector): computed once per snapshot generation.

The cache holds the node columns it was filled for and compares them by identity, so a new
snapshot with new columns (or a new generation) starts afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from gpuplane.scheduler.framework.snapshot import ClusterSnapshot

V = TypeVar("V")


class StaticCache(Generic[V]):
    """Owner of cached per-node results (mutable)."""

    def __init__(self) -> None:
        self._columns: tuple[object, ...] = ()
        self._generation = -1
        self._data: dict[Hashable, V] = {}

    def get(self, snap: ClusterSnapshot, key: Hashable, compute: Callable[[], V]) -> V:
        columns = (snap.node_names, snap.node_labels, snap.node_taints, snap.unschedulable)
        same = len(columns) == len(self._columns) and all(
            a is b for a, b in zip(columns, self._columns, strict=True)
        )
        if not same or snap.generation != self._generation:
            self._data.clear()
            self._columns = columns
            self._generation = snap.generation
        value = self._data.get(key)
        if value is None:
            value = compute()
            self._data[key] = value
        return value
