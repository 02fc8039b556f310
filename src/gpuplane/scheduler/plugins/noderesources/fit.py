"""NodeResourcesFit (kube-scheduler: framework/plugins/noderesources/fit.go, least_allocated.go,
most_allocated.go, resource_allocation.go).

Filter: one more pod must fit under the node's ``pods`` allocatable (``Too many pods``), and every
resource the pod requests (> 0) must fit in allocatable minus requested (``Insufficient <name>``);
every failing resource is a reason (Unschedulable: evicting pods can help). ``ignoredResources``
and ``ignoredResourceGroups`` (the part before "/") skip extended resources.
Score (``scoringStrategy``): per resource with weight w, LeastAllocated scores
``(allocatable - requested) * 100 / allocatable`` and MostAllocated ``requested * 100 /
allocatable``, requested including the pod; the node's score is the weighted mean over the
resources the node has. An extended resource the pod does not request is left out. Scoring reads
cpu and memory with kube's non-zero defaults (100m, 200 MB for a pod that requests none, on the
pod and on the pods already on the node: framework/nonzero.py, resource_allocation.go with
``useRequested`` false); Filter reads the requests as they are.

Vectorised over all nodes; ``filter_node``/``score_node`` are the per-node reference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal, cast

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from gpuplane.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from gpuplane.scheduler.framework.explain import ReasonGroup
from gpuplane.scheduler.framework.interfaces import FILTER, PRE_FILTER, SCORE, Handle
from gpuplane.scheduler.framework.nonzero import nonzero_request
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.status import SUCCESS, Code, Status, unschedulable
from gpuplane.scheduler.framework.types import BoolArray, IntArray, PodInfo

TOO_MANY_PODS = "Too many pods"
_NATIVE = frozenset({CPU, MEMORY, PODS, EPHEMERAL_STORAGE})
_KEY = "NodeResourcesFit/need"


class ResourceSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(min_length=1)
    weight: int = Field(default=1, ge=1, le=100)


class ScoringStrategy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["LeastAllocated", "MostAllocated"] = "LeastAllocated"
    resources: list[ResourceSpec] = Field(
        default_factory=lambda: [ResourceSpec(name=CPU), ResourceSpec(name=MEMORY)]
    )


class NodeResourcesFitArgs(BaseModel):
    """kubescheduler.config.k8s.io/v1 NodeResourcesFitArgs (the fields modelled)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    ignoredResources: list[str] = Field(default_factory=list)
    ignoredResourceGroups: list[str] = Field(default_factory=list)
    scoringStrategy: ScoringStrategy = Field(default_factory=ScoringStrategy)


def is_extended(name: str) -> bool:
    return "/" in name and not name.startswith("kubernetes.io/")


def is_scalar(name: str) -> bool:
    """kube's IsScalarResourceName: extended, hugepages-*, or prefixed native resources."""
    return name not in _NATIVE and ("/" in name or name.startswith("hugepages-"))


@dataclass(frozen=True, slots=True)
class Need:
    """A pod's requests against the snapshot's resource rows (PreFilter's state)."""

    rows: IntArray  # row indices (pods first)
    amounts: IntArray  # shape (k, 1)
    reasons: tuple[str, ...]
    missing: tuple[str, ...]  # requested resources no node has


class NodeResourcesFit:
    name: ClassVar[str] = "NodeResourcesFit"
    extension_points: ClassVar[frozenset[str]] = frozenset({PRE_FILTER, FILTER, SCORE})
    unsupported: ClassVar[tuple[str, ...]] = ("scoringStrategy RequestedToCapacityRatio",)

    def __init__(self, args: NodeResourcesFitArgs | None, handle: Handle) -> None:
        self.args = args or NodeResourcesFitArgs()
        self._ignored = set(self.args.ignoredResources)
        self._groups = set(self.args.ignoredResourceGroups)
        self._most = self.args.scoringStrategy.type == "MostAllocated"
        self._weights = [(r.name, r.weight) for r in self.args.scoringStrategy.resources]
        self._needs: dict[tuple[object, ...], Need] = {}

    def _skipped(self, resource: str) -> bool:
        return is_extended(resource) and (
            resource in self._ignored or resource.split("/")[0] in self._groups
        )

    def need(self, pod: PodInfo, st: ClusterState) -> Need:
        key = (st.snap.resources, tuple(sorted(pod.requests.items())))
        found = self._needs.get(key)
        if found is None:
            wanted = [
                (r, v) for r, v in sorted(pod.requests.items()) if v > 0 and not self._skipped(r)
            ]
            present = [(r, v) for r, v in wanted if r in st.row and r != PODS]
            rows = [st.row[PODS]] + [st.row[r] for r, _ in present]
            amounts = [1] + [v for _, v in present]
            reasons = (TOO_MANY_PODS, *(f"Insufficient {r}" for r, _ in present))
            missing = tuple(f"Insufficient {r}" for r, _ in wanted if r not in st.row)
            found = Need(
                np.array(rows, dtype=np.int64),
                np.array(amounts, dtype=np.int64).reshape(-1, 1),
                reasons,
                missing,
            )
            if len(self._needs) > 4096:
                self._needs.clear()
            self._needs[key] = found
        return found

    def pre_filter(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> Status:
        cs.data[_KEY] = self.need(pod, st)
        return SUCCESS

    def _need(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> Need:
        found = cs.data.get(_KEY)
        return found if isinstance(found, Need) else self.need(pod, st)

    # ----- Filter -----
    def filter(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> BoolArray | None:
        need = self._need(cs, pod, st)
        if need.missing:
            return np.zeros(st.num_nodes, dtype=bool)
        return cast(BoolArray, (st.free[need.rows] >= need.amounts).all(axis=0))

    def filter_reasons(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray
    ) -> list[ReasonGroup]:
        need = self._need(cs, pod, st)
        groups = [
            ReasonGroup(self.name, Code.UNSCHEDULABLE, reason, nodes) for reason in need.missing
        ]
        short = st.free[np.ix_(need.rows, nodes)] < need.amounts
        for j, reason in enumerate(need.reasons):
            bad = nodes[short[j]]
            if bad.size:
                groups.append(ReasonGroup(self.name, Code.UNSCHEDULABLE, reason, bad))
        return groups

    def filter_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> Status:
        need = self._need(cs, pod, st)
        reasons = [
            reason
            for row, amount, reason in zip(need.rows, need.amounts[:, 0], need.reasons, strict=True)
            if int(st.free[row, i]) < int(amount)
        ]
        return unschedulable(*reasons, *need.missing) if reasons or need.missing else SUCCESS

    # ----- Score -----
    def _scored(self, pod: PodInfo, st: ClusterState) -> list[tuple[int, int, int]]:
        """(row, pod request, weight) of the resources that count for this pod."""
        out = []
        for resource, weight in self._weights:
            row = st.row.get(resource)
            request = nonzero_request(pod.requests, resource)
            if row is None or resource == PODS or (request == 0 and is_scalar(resource)):
                continue
            out.append((row, request, weight))
        return out

    def score(self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray) -> IntArray:
        total = np.zeros(nodes.size, dtype=np.int64)
        weights = np.zeros(nodes.size, dtype=np.int64)
        for row, request, weight in self._scored(pod, st):
            alloc = st.alloc[row, nodes]
            used = st.nonzero_requested(row, nodes) + request
            has = alloc > 0
            safe = np.where(has, alloc, 1)
            if self._most:
                part = np.minimum(used, alloc) * 100 // safe
            else:
                part = np.where(used > alloc, 0, (alloc - used) * 100 // safe)
            total += np.where(has, part * weight, 0)
            weights += np.where(has, weight, 0)
        return np.where(weights > 0, total // np.maximum(weights, 1), 0)

    def score_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> int:
        total = weights = 0
        for row, request, weight in self._scored(pod, st):
            alloc = int(st.alloc[row, i])
            used = int(st.nonzero_requested(row, np.array([i]))[0]) + request
            if alloc == 0:
                continue
            if self._most:
                part = min(used, alloc) * 100 // alloc
            else:
                part = 0 if used > alloc else (alloc - used) * 100 // alloc
            total += part * weight
            weights += weight
        return total // weights if weights else 0
