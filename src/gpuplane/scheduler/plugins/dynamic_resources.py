"""DynamicResources (kube-scheduler: framework/plugins/dynamicresources): pods that use
ResourceClaims go only where their claims can be allocated or are already usable.

As the real plugin (1.36), without the API round-trips the twin does not have:

- PreFilter: finds the pod's claims (``spec.resourceClaims``, carried in the snapshot's
  ``dra.pods`` since ``PodInfo`` has no such field). A missing claim, one being deleted, a
  template's claim not created yet or not owned by the pod, a full ``reservedFor``, an allocation
  already in flight for another pod, a missing device class: Unschedulable with the plugin's
  message, for every node (so the allocator's own "could not retrieve device class" error is not
  reached). A request naming no class is an Error (``statusError``). A pod without claims passes
  everything.
- Filter, per node: an allocated claim must be usable there (``status.allocation.nodeSelector``,
  else ``resourceclaim not available on the node``); the unallocated ones are allocated together
  by the structured allocator against the node's slices, with every device held by a claim of
  the cluster (or reserved earlier in this decision) taken: no solution is
  ``cannot allocate all claims``; invalid pools with no other solution are the allocator's
  node-local failure (``invalid resource pools were encountered``, Unschedulable for that node,
  as kube's ``ErrFailedAllocationOnNode``); any other allocator error (a CEL runtime error, too
  many devices, ``All`` meeting an incomplete or invalid pool) is Code.ERROR, which the framework
  turns into a failed attempt: ``running "DynamicResources" filter plugin: <error>``, no other
  node tried.
- Score / NormalizeScore: a node where a prioritized list gets an earlier subrequest scores
  higher (8 minus the subrequest's index per list), scaled by the best node.
- Reserve: the node's allocation is recorded as in flight for the claims (kube: the assume cache
  plus ``SignalClaimPendingAllocation``), so later pods of the same decision see those devices as
  taken and cannot allocate the same claims; Unreserve drops it.
- PreBind: writes the allocation and adds the pod to ``reservedFor`` (kube: the claim's status
  update); later pods of the decision see the claim allocated and reserved.

Writes go through the Handle's ``writes`` (the decision's ``WriteSink``): Reserve holds the
node's allocation as in flight there, PreBind writes the claims' new status there, and every
read of claims and in-flight allocations is the sink's (the snapshot with the decision's writes
over it). The framework drops a pod's writes when its binding does not happen; the decision
carries the rest to the caller. The plugin itself keeps only a per-snapshot index of the slices.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np
from pydantic import BaseModel

from gpuplane.scheduler.framework.explain import ReasonGroup
from gpuplane.scheduler.framework.interfaces import (
    FILTER,
    PRE_BIND,
    PRE_FILTER,
    RESERVE,
    SCORE,
    Handle,
)
from gpuplane.scheduler.framework.normalize import default_normalize, default_normalize_reference
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.status import SUCCESS, Code, Status, unschedulable
from gpuplane.scheduler.framework.types import BoolArray, IntArray, PodInfo
from gpuplane.scheduler.framework.writes import WriteSink
from gpuplane.slicing.dra.allocation import AllocationResult
from gpuplane.slicing.dra.allocator import allocate
from gpuplane.slicing.dra.claims import (
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimStatus,
)
from gpuplane.slicing.dra.devices import DeviceID, ResourceSlice
from gpuplane.slicing.dra.node_selector import DraNode, NodeSelector
from gpuplane.slicing.dra.outcome import OutcomeKind
from gpuplane.slicing.dra.pod_claims import ClaimNotFound
from gpuplane.slicing.dra.scheduling import (
    claim_problem,
    pod_resource_claims,
    prioritized_list_score,
)
from gpuplane.slicing.dra.snapshot import DraSnapshot, PendingAllocation, allocated_in

NAME = "DynamicResources"
CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"
NOT_FOUND_FOR_NODE = "claim allocation not found for node"


class _SliceIndex:
    """A snapshot's slices by node name and by pool, so each node's allocation reads only the
    pools it can see (whole pools, so completeness and counters are judged as on the full list)."""

    def __init__(self, snap: DraSnapshot) -> None:
        self.snap = snap
        self._by_node: dict[str, list[ResourceSlice]] = {}
        self._unbound: list[ResourceSlice] = []
        self._by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
        self._for_node: dict[str, tuple[ResourceSlice, ...]] = {}
        for rslice in snap.slices:
            spec = rslice.spec
            self._by_pool.setdefault((spec.driver, spec.pool.name), []).append(rslice)
            if spec.node_name and not spec.shared_counters:
                self._by_node.setdefault(spec.node_name, []).append(rslice)
            else:
                self._unbound.append(rslice)

    def slices_for(self, node: str) -> tuple[ResourceSlice, ...]:
        found = self._for_node.get(node)
        if found is None:
            pools = {
                (s.spec.driver, s.spec.pool.name)
                for s in (*self._by_node.get(node, ()), *self._unbound)
            }
            found = tuple(s for key in sorted(pools) for s in self._by_pool[key])
            self._for_node[node] = found
        return found


def _allocated(writes: WriteSink) -> frozenset[DeviceID]:
    allocations = [c.status.allocation for c in writes.claims.values()]
    in_flight = [p.allocation for p in writes.pending.values()]
    return allocated_in([a for a in allocations if a is not None], in_flight)


@dataclass(slots=True)
class _PodState:
    """stateData: the pod's claims as PreFilter saw them and the per-node results."""

    dra: DraSnapshot
    slices: _SliceIndex
    claims: list[ResourceClaim]
    to_allocate: list[int]
    available_on: list[NodeSelector | None]
    allocated: frozenset[DeviceID]
    statuses: dict[int, Status] = field(default_factory=dict)
    allocations: dict[int, tuple[AllocationResult, ...]] = field(default_factory=dict)


class DynamicResources:
    name: ClassVar[str] = NAME
    extension_points: ClassVar[frozenset[str]] = frozenset(
        {PRE_FILTER, FILTER, SCORE, RESERVE, PRE_BIND}
    )
    # Allocator errors are Error statuses: the framework fails the pod's attempt on them.
    filter_may_error: ClassVar[bool] = True
    unsupported: ClassVar[tuple[str, ...]] = (
        "PostFilter deallocation of claims allocated on unusable nodes",
        "extended resources backed by DRA (DRAExtendedResource)",
        "consumable capacity and distinctAttribute (DRAConsumableCapacity)",
        "binding conditions (DRADeviceBindingConditions)",
        "DeviceTaintRules and NoExecute eviction",
        "the filter timeout (DRASchedulerFilterTimeout)",
    )

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        self._handle = handle
        self._index: _SliceIndex | None = None

    def _slices(self, snap: DraSnapshot) -> _SliceIndex:
        """The slice index of ``snap`` (a cache: rebuilt when a decision brings a new one)."""
        if self._index is None or self._index.snap is not snap:
            self._index = _SliceIndex(snap)
        return self._index

    @staticmethod
    def _state(cs: CycleState) -> _PodState | None:
        value = cs.data.get(NAME)
        return value if isinstance(value, _PodState) else None

    # ----- PreFilter -----
    def pre_filter(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> Status:
        cs.data.pop(NAME, None)
        writes = self._handle.writes
        dra = writes.dra
        entries = dra.pods.get(pod.uid) if dra is not None else None
        if dra is None or entries is None or not entries.resource_claims:
            return SUCCESS
        try:
            claims = pod_resource_claims(pod.namespace, pod.name, pod.uid, entries, writes.claims)
        except ClaimNotFound as err:
            return unschedulable(str(err))
        if not claims:
            return SUCCESS
        for claim in claims:
            pending = writes.pending.get(claim.key)
            in_flight = pending is not None and pending.pod_uid != pod.uid
            problem = claim_problem(claim, pod.uid, in_flight, dra.classes, dra.features)
            if problem is not None:
                if problem.error:
                    return Status(Code.ERROR, (problem.message,))
                return unschedulable(problem.message)
        cs.data[NAME] = _PodState(
            dra=dra,
            slices=self._slices(dra),
            claims=claims,
            to_allocate=[i for i, c in enumerate(claims) if c.status.allocation is None],
            available_on=[
                c.status.allocation.node_selector if c.status.allocation else None for c in claims
            ],
            allocated=_allocated(writes),
        )
        return SUCCESS

    # ----- Filter -----
    def filter_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> Status:
        state = self._state(cs)
        if state is None:
            return SUCCESS
        cached = state.statuses.get(i)
        if cached is None:
            cached = self._filter(state, st, i)
            state.statuses[i] = cached
        return cached

    def _filter(self, state: _PodState, st: ClusterState, i: int) -> Status:
        node = DraNode(st.snap.node_names[i], st.snap.node_labels[i])
        unavailable = [
            j
            for j, sel in enumerate(state.available_on)
            if sel is not None and not sel.matches(node)
        ]
        if state.to_allocate:
            dra = state.dra
            outcome = allocate(
                [state.claims[j] for j in state.to_allocate],
                state.slices.slices_for(node.name),
                dra.classes,
                state.allocated,
                node,
                features=dra.features,
            )
            if outcome.kind is OutcomeKind.ERROR:
                return Status(Code.ERROR, (outcome.message,))
            if outcome.kind is OutcomeKind.NODE_ERROR:
                return unschedulable(outcome.message)
            if not outcome.ok:
                return unschedulable(CANNOT_ALLOCATE)
            state.allocations[i] = outcome.results
        if unavailable:
            return unschedulable(NOT_AVAILABLE)
        return SUCCESS

    def filter(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> BoolArray | None:
        if self._state(cs) is None:
            return None
        return np.array(
            [self.filter_node(cs, pod, st, i).ok for i in range(st.num_nodes)], dtype=bool
        )

    def filter_reasons(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray
    ) -> list[ReasonGroup]:
        groups: dict[tuple[Code, str], list[int]] = {}
        for i in nodes:
            status = self.filter_node(cs, pod, st, int(i))
            groups.setdefault((status.code, status.message), []).append(int(i))
        return [
            ReasonGroup(self.name, code, reason, np.array(ids, dtype=np.int64))
            for (code, reason), ids in sorted(groups.items())
        ]

    # ----- Score -----
    def score_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> int:
        state = self._state(cs)
        if state is None or not state.to_allocate:
            return 0
        if not self.filter_node(cs, pod, st, i).ok or i not in state.allocations:
            return 0
        claims = [state.claims[j] for j in state.to_allocate]
        return prioritized_list_score(claims, state.allocations[i])

    def score(self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray) -> IntArray:
        return np.array([self.score_node(cs, pod, st, int(i)) for i in nodes], dtype=np.int64)

    def normalize(self, scores: IntArray) -> IntArray:
        return default_normalize(scores, reverse=False)

    def normalize_reference(self, scores: list[int]) -> list[int]:
        return default_normalize_reference(scores, reverse=False)

    # ----- Reserve -----
    def reserve(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> Status:
        state = self._state(cs)
        if state is None or not state.to_allocate:
            return SUCCESS
        if i not in state.allocations and not self.filter_node(cs, pod, st, i).ok:
            return Status(Code.ERROR, (NOT_FOUND_FOR_NODE,))
        writes = self._handle.writes
        for j, allocation in zip(state.to_allocate, state.allocations[i], strict=True):
            writes.hold(state.claims[j].key, PendingAllocation(pod.uid, allocation))
        return SUCCESS

    def unreserve(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> None:
        """Nothing of the plugin's own: the framework drops the pod's writes (its allocations
        in flight and its claim writes) from the sink after Unreserve."""

    # ----- PreBind -----
    def pre_bind(self, cs: CycleState, pod: PodInfo, node: str) -> Status:
        writes = self._handle.writes
        dra = writes.dra
        if dra is None:
            return SUCCESS
        state = self._state(cs)
        if state is not None:
            claims = state.claims
        else:
            # A pod that waited at Permit in an earlier decision: its cycle state is gone, its
            # claims and in-flight allocations are in the snapshot.
            entries = dra.pods.get(pod.uid)
            if entries is None:
                return SUCCESS
            try:
                claims = pod_resource_claims(
                    pod.namespace, pod.name, pod.uid, entries, writes.claims
                )
            except ClaimNotFound as err:
                return Status(Code.ERROR, (str(err),))
        for claim in claims:
            status = self._bind_claim(writes, pod, writes.claims.get(claim.key, claim))
            if not status.ok:
                return status
        return SUCCESS

    @staticmethod
    def _bind_claim(writes: WriteSink, pod: PodInfo, claim: ResourceClaim) -> Status:
        if claim.is_reserved_for(pod.uid):
            return SUCCESS
        pending = writes.pending.get(claim.key)
        allocation = claim.status.allocation
        if allocation is None and pending is not None and pending.pod_uid == pod.uid:
            allocation = pending.allocation
        if allocation is None:
            return Status(Code.ERROR, (f"claim {claim.key}: {NOT_FOUND_FOR_NODE}",))
        if not claim.can_be_reserved():
            return Status(Code.ERROR, ("resourceclaim in use",))
        ref = ResourceClaimConsumerReference(name=pod.name, uid=pod.uid)
        status = ResourceClaimStatus(allocation, (*claim.status.reserved_for, ref))
        writes.write_claim(pod.uid, replace(claim, status=status))
        if pending is not None and pending.pod_uid == pod.uid:
            writes.settle(claim.key)
        return SUCCESS
