"""NodeResourcesBalancedAllocation (kube-scheduler: framework/plugins/noderesources/
balanced_allocation.go, resource_allocation.go), v1.31.

A node scores higher the closer its usage fractions of the configured resources (default cpu and
memory) are to each other once the pod is placed: per resource the fraction is (requested on the
node + the pod's request) / allocatable, capped at 1; the score is (1 - std) * 100, truncated,
where std is |f1 - f2| / 2 for two fractions, the population standard deviation for more, and 0
for fewer. A resource the node does not have (allocatable 0) is left out, as is an extended
(scalar) resource the pod does not request.

Unlike NodeResourcesFit this plugin reads requests as written (upstream builds it with
``useRequested: true``): no non-zero defaults, neither for the pod nor for the node's pods. v1.31
scores every pod; the skip for pods that request nothing came in a later release
(kubernetes#129138), so it is not here.

Vectorised over the feasible nodes (sequential over the few resources, in the configured order,
so the floating point sums are upstream's); ``score_node`` is the per-node reference.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from gpuplane.api.resources import CPU, MEMORY, PODS
from gpuplane.scheduler.framework.interfaces import MAX_NODE_SCORE, SCORE, Handle
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.types import IntArray, PodInfo
from gpuplane.scheduler.plugins.noderesources.fit import ResourceSpec, is_scalar


class NodeResourcesBalancedAllocationArgs(BaseModel):
    """kubescheduler.config.k8s.io/v1 NodeResourcesBalancedAllocationArgs (weights are accepted
    and, as upstream, not used by this score)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    resources: list[ResourceSpec] = Field(
        default_factory=lambda: [ResourceSpec(name=CPU), ResourceSpec(name=MEMORY)],
        min_length=1,
    )


def balanced_score(fractions: list[float]) -> int:
    """Upstream's balancedResourceScorer over the fractions of one node."""
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    else:
        std = 0.0
    return int((1 - std) * MAX_NODE_SCORE)


class NodeResourcesBalancedAllocation:
    name: ClassVar[str] = "NodeResourcesBalancedAllocation"
    extension_points: ClassVar[frozenset[str]] = frozenset({SCORE})
    unsupported: ClassVar[tuple[str, ...]] = ("pod overhead",)

    def __init__(self, args: NodeResourcesBalancedAllocationArgs | None, handle: Handle) -> None:
        self.args = args or NodeResourcesBalancedAllocationArgs()
        self._names = [r.name for r in self.args.resources]

    def _scored(self, pod: PodInfo, st: ClusterState) -> list[tuple[int, int]]:
        """(row, pod request) of the resources that count for this pod, in the args' order."""
        out = []
        for resource in self._names:
            row = st.row.get(resource)
            request = pod.requests.get(resource, 0)
            if row is None or resource == PODS or (request == 0 and is_scalar(resource)):
                continue
            out.append((row, request))
        return out

    def score(self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray) -> IntArray:
        rows = self._scored(pod, st)
        fractions = np.zeros((len(rows), nodes.size), dtype=np.float64)
        valid = np.zeros((len(rows), nodes.size), dtype=bool)
        for k, (row, request) in enumerate(rows):
            alloc = st.alloc[row, nodes]
            valid[k] = alloc > 0
            used = (st.requested(row, nodes) + request).astype(np.float64)
            fractions[k] = np.minimum(used / np.where(valid[k], alloc, 1), 1.0)
        count = valid.sum(axis=0)
        total = np.zeros(nodes.size, dtype=np.float64)
        for k in range(len(rows)):
            total += np.where(valid[k], fractions[k], 0.0)
        mean = total / np.maximum(count, 1)
        squares = np.zeros(nodes.size, dtype=np.float64)
        for k in range(len(rows)):
            dev = fractions[k] - mean
            squares += np.where(valid[k], dev * dev, 0.0)
        # Two fractions: |f1 - f2| / 2 exactly as upstream writes it (max - min of the valid).
        hi = np.where(valid, fractions, -np.inf).max(axis=0, initial=-np.inf)
        lo = np.where(valid, fractions, np.inf).min(axis=0, initial=np.inf)
        pair = np.where(count == 2, np.abs((hi - lo) / 2), 0.0)
        many = np.sqrt(squares / np.maximum(count, 1))
        std = np.where(count == 2, pair, np.where(count > 2, many, 0.0))
        return ((1 - std) * MAX_NODE_SCORE).astype(np.int64)

    def score_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> int:
        fractions = []
        for row, request in self._scored(pod, st):
            alloc = int(st.alloc[row, i])
            if alloc == 0:
                continue
            used = int(st.alloc[row, i] - st.free[row, i]) + request
            fractions.append(min(used / alloc, 1.0))
        return balanced_score(fractions)
