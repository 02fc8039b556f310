"""The Handle's write sink: a plugin records what must be written when a pod binds, the decision
carries it, nothing is applied inside ``decide``, and a pod that does not bind takes its writes
back."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.scheduler.framework.interfaces import Handle
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.status import SUCCESS, Status, unschedulable, wait
from gpuplane.scheduler.framework.types import PodInfo
from gpuplane.scheduler.framework.writes import DecisionWrites, WriteSink
from gpuplane.scheduler.plugins.registry import in_tree_registry
from gpuplane.slicing.dra.allocation import AllocationResult, DeviceAllocationResult
from gpuplane.slicing.dra.allocation import DeviceRequestAllocationResult as Result
from gpuplane.slicing.dra.claims import (
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimStatus,
)
from gpuplane.slicing.dra.node_selector import node_name_selector
from gpuplane.slicing.dra.snapshot import PendingAllocation, make_dra_snapshot
from tests.unit.scheduler.factories import make_cluster, make_pod
from tests.unit.slicing.test_dra_support import claim, req

ALLOCATION = AllocationResult(
    DeviceAllocationResult((Result("gpus", "gpu.nvidia.com", "n0", "gpu-0"),)),
    node_name_selector("n0"),
)


def key(pod: PodInfo) -> str:
    return f"ns/{pod.name}"


def written_for(c: ResourceClaim, uid: str) -> ResourceClaim:
    ref = ResourceClaimConsumerReference(name=uid, uid=uid)
    return replace(c, status=ResourceClaimStatus(ALLOCATION, (ref,)))


class Recorder:
    """Reserve holds an allocation for the pod's claim ``ns/<pod name>``; PreBind writes the
    claim (then refuses pods named "bad*"); Permit makes pods named "wait*" wait and refuses
    pods named "deny*"."""

    name: ClassVar[str] = "Recorder"
    extension_points: ClassVar[frozenset[str]] = frozenset({"reserve", "permit", "preBind"})
    unsupported: ClassVar[tuple[str, ...]] = ()

    def __init__(self, args: object, handle: Handle) -> None:
        self.handle = handle

    def reserve(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> Status:
        self.handle.writes.hold(key(pod), PendingAllocation(pod.uid, ALLOCATION))
        return SUCCESS

    def unreserve(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> None:
        pass

    def permit(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> Status:
        if pod.name.startswith("deny"):
            return unschedulable("denied at permit")
        return wait(10.0) if pod.name.startswith("wait") else SUCCESS

    def pre_bind(self, cs: CycleState, pod: PodInfo, node: str) -> Status:
        writes = self.handle.writes
        writes.write_claim(pod.uid, written_for(writes.claims[key(pod)], pod.uid))
        writes.settle(key(pod))
        return unschedulable("refused after writing") if pod.name.startswith("bad") else SUCCESS


def recorder() -> Scheduler:
    registry = in_tree_registry()
    registry.register("Recorder")(Recorder)
    cfg = ProfileConfig.model_validate(
        {"plugins": {"multiPoint": {"enabled": [{"name": "Recorder"}]}}}
    )
    return Scheduler([cfg], registry=registry)


def cluster(*names: str) -> ClusterSnapshot:
    claims = [claim(n, req("gpus", cls="gpu.nvidia.com"), namespace="ns") for n in names]
    return replace(make_cluster([8]), dra=make_dra_snapshot(claims=claims))


def statuses(writes: DecisionWrites) -> dict[str, ResourceClaim]:
    return {c.key: c for c in writes.claim_statuses}


def test_the_decision_carries_the_writes_of_bound_pods() -> None:
    snap = cluster("a", "b")
    decision = recorder().decide(snap, [make_pod("a", 1), make_pod("b", 1)])
    assert [b.pod_uid for b in decision.bindings] == ["a", "b"]
    written = statuses(decision.writes)
    assert list(written) == ["ns/a", "ns/b"]
    assert written["ns/a"].is_reserved_for("a") and written["ns/b"].is_reserved_for("b")
    assert decision.writes.pending_allocations == {}  # written, so no longer in flight


def test_nothing_is_applied_to_the_snapshot() -> None:
    snap = cluster("a")
    assert snap.dra is not None
    before = dict(snap.dra.claims)
    recorder().decide(snap, [make_pod("a", 1)])
    assert dict(snap.dra.claims) == before
    assert snap.dra.claims["ns/a"].status.allocation is None


def test_a_failed_bind_drops_the_pods_writes() -> None:
    snap = cluster("bad", "good")
    decision = recorder().decide(snap, [make_pod("bad", 1), make_pod("good", 1)])
    assert [b.pod_uid for b in decision.bindings] == ["good"]
    assert "refused after writing" in decision.unschedulable[0].message
    assert list(statuses(decision.writes)) == ["ns/good"]
    assert decision.writes.pending_allocations == {}


def test_unreserve_drops_the_allocation_a_rejected_pod_held() -> None:
    snap = cluster("deny-a", "b")
    decision = recorder().decide(snap, [make_pod("deny-a", 1), make_pod("b", 1)])
    assert [b.pod_uid for b in decision.bindings] == ["b"]
    assert "denied at permit" in decision.unschedulable[0].message
    assert list(statuses(decision.writes)) == ["ns/b"]
    assert decision.writes.pending_allocations == {}


def test_a_waiting_pod_keeps_its_allocation_in_flight_and_writes_nothing() -> None:
    snap = cluster("wait-a")
    decision = recorder().decide(snap, [make_pod("wait-a", 1)])
    assert not decision.bindings and [w.pod.uid for w in decision.waiting] == ["wait-a"]
    assert decision.writes.claim_statuses == ()
    assert decision.writes.pending_allocations == {
        "ns/wait-a": PendingAllocation("wait-a", ALLOCATION)
    }


def test_no_dra_section_means_no_pending_to_replace() -> None:
    decision = recorder().decide(make_cluster([8]), [])
    assert decision.writes == DecisionWrites()


def test_the_sink_takes_a_pods_writes_back() -> None:
    first, second = claim("c", req("gpus"), namespace="ns"), claim("d", req("gpus"), namespace="ns")
    sink = WriteSink(make_dra_snapshot(claims=[first, second]))
    sink.write_claim("a", written_for(first, "a"))
    sink.hold("ns/d", PendingAllocation("b", ALLOCATION))
    sink.write_claim("b", written_for(sink.claims["ns/c"], "b"))
    assert sink.claims["ns/c"].is_reserved_for("b")
    sink.drop("b")
    # a's write stands; b's write over it and b's allocation in flight are gone.
    assert sink.claims["ns/c"] == written_for(first, "a") == sink.written["ns/c"]
    assert sink.pending == {}
    sink.drop("a")
    assert sink.claims["ns/c"] == first and sink.build() == DecisionWrites((), {})
