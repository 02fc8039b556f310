"""The placement seam: what the scheduler sees (a snapshot) and what it decides.

Until the scheduling framework lands (its own issue), the twin uses ``FirstFitPlacement``
(``first_fit.py``) behind this interface; the framework will implement the same ``decide``.
Decisions are pure: ``decide(snapshot, pending) -> PlacementDecision``; the twin applies them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from gpuplane.twin.spec import Resources, Taint, Toleration


@dataclass(frozen=True, slots=True)
class PendingPod:
    uid: str
    key: str
    requests: Resources
    priority: int
    created_s: float
    node_selector: Mapping[str, str]
    tolerations: tuple[Toleration, ...]
    affinity: Mapping[str, object] | None
    pod_group: str | None


@dataclass(frozen=True, slots=True)
class NodeView:
    name: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    unschedulable: bool
    ready: bool
    free_other: Mapping[str, int]  # free amounts of resources outside the core arrays


@dataclass(frozen=True, slots=True)
class ClusterSnapshot:
    """Nodes in a fixed order; ``free[r][i]`` is node i's free amount of core resource r."""

    nodes: tuple[NodeView, ...]
    free: Mapping[str, np.ndarray]
    schedulable: np.ndarray
    # Pod groups: name -> (min_member, members already bound)
    pod_groups: Mapping[str, tuple[int, int]]
    # Bumped whenever node labels, taints, readiness or cordoning change: a placement policy may
    # cache per-node filter results for one generation.
    generation: int = 0


@dataclass(frozen=True, slots=True)
class Binding:
    pod_uid: str
    node: str


@dataclass(frozen=True, slots=True)
class Unschedulable:
    pod_uid: str
    message: str


@dataclass(frozen=True, slots=True)
class PlacementDecision:
    bindings: tuple[Binding, ...]
    unschedulable: tuple[Unschedulable, ...]


class PlacementPolicy(Protocol):
    name: str

    def decide(
        self, snapshot: ClusterSnapshot, pending: Sequence[PendingPod]
    ) -> PlacementDecision: ...


def fit_error(num_nodes: int, reasons: Mapping[str, int]) -> str:
    """kube-scheduler's FitError text: ``0/N nodes are available: <count reason>, ...``.

    The "count reason" strings are sorted as strings, as kube-scheduler's sortReasonsHistogram does.
    """
    parts = sorted(f"{count} {reason}" for reason, count in reasons.items())
    return f"0/{num_nodes} nodes are available: {', '.join(parts)}."
