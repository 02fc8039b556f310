"""DynamicResources: pods with ResourceClaims scheduled through the framework, with the
structured allocator picking devices and later pods of a decision seeing earlier ones."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import gpuplane.scheduler.plugins.dynamic_resources as dynamic_resources
from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.scheduler.framework.cycle import Framework
from gpuplane.scheduler.framework.decision import SchedulingDecision
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.status import Code
from gpuplane.scheduler.framework.types import PodInfo
from gpuplane.scheduler.framework.writes import WriteSink
from gpuplane.slicing.dra.allocation import AllocationResult, DeviceAllocationResult
from gpuplane.slicing.dra.allocation import DeviceRequestAllocationResult as Result
from gpuplane.slicing.dra.claims import (
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimStatus,
    ResourceClaimTemplate,
)
from gpuplane.slicing.dra.devices import ResourceSlice
from gpuplane.slicing.dra.node_selector import node_name_selector
from gpuplane.slicing.dra.node_slices import node_resource_slices
from gpuplane.slicing.dra.nvidia import NVLINK_DOMAIN_ATTRIBUTE
from gpuplane.slicing.dra.pod_claims import PodClaims, PodResourceClaim, claim_from_template
from gpuplane.slicing.dra.snapshot import PendingAllocation, make_dra_snapshot
from gpuplane.topology.presets import load_preset
from tests.unit.scheduler.factories import make_cluster, make_pod, make_scheduler
from tests.unit.slicing.test_dra_support import claim, dclass, dev, first, match, req, rslice, sub

SEED = load_preset("seed-8gpu")
GPU = dclass(
    "gpu.nvidia.com",
    'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"',
)
PAIR = ResourceClaimTemplate(
    "pair",
    "ns",
    claim(
        "x", req("gpus", 2, cls="gpu.nvidia.com"), constraints=[match(NVLINK_DOMAIN_ATTRIBUTE)]
    ).spec,
)
PROFILE = ProfileConfig.model_validate(
    {"plugins": {"multiPoint": {"enabled": [{"name": dynamic_resources.NAME}]}}}
)


def scheduler() -> Scheduler:
    return make_scheduler([PROFILE])


def plugin(s: Scheduler) -> dynamic_resources.DynamicResources:
    found = s.frameworks["default-scheduler"].plugins[dynamic_resources.NAME]
    assert isinstance(found, dynamic_resources.DynamicResources)
    return found


def written(decision: SchedulingDecision) -> dict[str, ResourceClaim]:
    """The claim statuses the decision carries, by key."""
    return {c.key: c for c in decision.writes.claim_statuses}


def started(snap: ClusterSnapshot) -> tuple[Framework, dynamic_resources.DynamicResources]:
    """The default profile's framework with a decision over ``snap`` started, and its plugin."""
    s = scheduler()
    fw = s.frameworks["default-scheduler"]
    fw.start_decision(WriteSink(snap.dra))
    return fw, plugin(s)


def cluster(
    num_nodes: int,
    claims: Sequence[ResourceClaim],
    pods: dict[str, PodClaims],
    *,
    slices: Sequence[ResourceSlice] | None = None,
    pending: dict[str, PendingAllocation] | None = None,
    cordoned: Sequence[int] = (),
) -> ClusterSnapshot:
    snap = make_cluster([0] * num_nodes, cpu_m=224_000, cordoned=cordoned)
    if slices is None:
        slices = [
            s for i in range(num_nodes) for s in node_resource_slices(SEED, node_name=f"n{i}")
        ]
    dra = make_dra_snapshot(slices=slices, classes=[GPU], claims=claims, pods=pods, pending=pending)
    return replace(snap, dra=dra)


def templated(uid: str) -> tuple[PodInfo, ResourceClaim, PodClaims]:
    """A pod whose claim the resourceclaim controller made from the ``pair`` template."""
    made = claim_from_template(PAIR, pod_name=uid, pod_uid=uid, pod_claim="gpus")
    entry = PodClaims(
        (PodResourceClaim("gpus", resource_claim_template_name="pair"),), {"gpus": made.name}
    )
    return make_pod(uid, cpu_m=1000 + int(uid[1:])), made, entry


def named(*names: str) -> PodClaims:
    return PodClaims(tuple(PodResourceClaim(n, resource_claim_name=n) for n in names))


def test_nvlinked_pairs_fill_the_islands_and_later_pods_see_earlier_ones() -> None:
    made = [templated(f"p{i}") for i in range(5)]
    snap = cluster(1, [m[1] for m in made], {m[0].uid: m[2] for m in made})
    s = scheduler()
    decision = s.decide(snap, [m[0] for m in made])
    assert [b.pod_uid for b in decision.bindings] == ["p0", "p1", "p2", "p3"]
    (failed,) = decision.unschedulable
    assert failed.message.startswith("0/1 nodes are available: 1 cannot allocate all claims.")
    claims = written(decision)
    assert len(claims) == 4
    devices: list[str] = []
    for pod, c, _ in made[:4]:
        allocation = claims[c.key].status.allocation
        assert allocation is not None and claims[c.key].is_reserved_for(pod.uid)
        pair = [r.device for r in allocation.devices.results]
        islands = {int(d.removeprefix("gpu-")) // 4 for d in pair}
        assert len(pair) == 2 and len(islands) == 1
        devices += pair
    assert sorted(devices) == [f"gpu-{i}" for i in range(8)]
    assert decision.writes.pending_allocations == {}


def test_an_allocated_claim_pins_the_pod_to_its_node() -> None:
    allocation = AllocationResult(
        DeviceAllocationResult((Result("gpus", "gpu.nvidia.com", "n1", "gpu-0"),)),
        node_name_selector("n1"),
    )
    shared = replace(
        claim("shared", req("gpus", cls="gpu.nvidia.com"), namespace="ns"),
        status=ResourceClaimStatus(allocation, (ResourceClaimConsumerReference("other", "o"),)),
    )
    pod = make_pod("p")
    decision = scheduler().decide(cluster(2, [shared], {"p": named("shared")}), [pod])
    assert [(b.pod_uid, b.node) for b in decision.bindings] == [("p", "n1")]
    decision = scheduler().decide(cluster(2, [shared], {"p": named("shared")}, cordoned=[1]), [pod])
    (failed,) = decision.unschedulable
    assert "1 resourceclaim not available on the node" in failed.message


def test_two_pods_sharing_an_unallocated_claim_land_together() -> None:
    shared = claim("shared", req("gpus", cls="gpu.nvidia.com"), namespace="ns")
    pods = [make_pod("a", cpu_m=1000), make_pod("b", cpu_m=2000)]
    s = scheduler()
    decision = s.decide(cluster(2, [shared], {"a": named("shared"), "b": named("shared")}), pods)
    nodes = {b.node for b in decision.bindings}
    assert len(decision.bindings) == 2 and len(nodes) == 1
    final = written(decision)["ns/shared"]
    assert [r.uid for r in final.status.reserved_for] == ["a", "b"]


def prefilter_message(snap: ClusterSnapshot, pod: PodInfo) -> str:
    (failed,) = scheduler().decide(snap, [pod]).unschedulable
    return failed.message


def test_prefilter_rejections_in_the_plugins_words() -> None:
    pod = make_pod("p")
    assert prefilter_message(cluster(1, [], {"p": named("nope")}), pod).startswith(
        '0/1 nodes are available: resourceclaim.resource.k8s.io "nope" not found.'
    )
    tmpl = PodClaims((PodResourceClaim("gpus", resource_claim_template_name="pair"),))
    assert 'pod "ns/p": ResourceClaim not created yet' in prefilter_message(
        cluster(1, [], {"p": tmpl}), pod
    )
    other_class = claim("c", req("gpus", cls="missing"), namespace="ns")
    assert "request gpus: device class missing does not exist" in prefilter_message(
        cluster(1, [other_class], {"p": named("c")}), pod
    )
    gone = replace(claim("c", req("gpus", cls="gpu.nvidia.com"), namespace="ns"), deleting=True)
    assert 'resourceclaim "c" is being deleted' in prefilter_message(
        cluster(1, [gone], {"p": named("c")}), pod
    )
    _, made, entry = templated("p1")
    stolen = replace(made, owner_pod_uid="someone-else")
    assert "(pod is not owner)" in prefilter_message(cluster(1, [stolen], {"p": entry}), pod)


def test_a_claim_in_flight_for_another_pod_and_a_full_reservation_list() -> None:
    c = claim("c", req("gpus", cls="gpu.nvidia.com"), namespace="ns")
    pending = {"ns/c": PendingAllocation("other", AllocationResult())}
    assert "resource claim ns/c is in the process of being allocated" in prefilter_message(
        cluster(1, [c], {"p": named("c")}, pending=pending), make_pod("p")
    )
    users = tuple(ResourceClaimConsumerReference(f"u{i}", f"u{i}") for i in range(256))
    full = replace(c, status=ResourceClaimStatus(AllocationResult(), users))
    assert "resourceclaim in use" in prefilter_message(
        cluster(1, [full], {"p": named("c")}), make_pod("p")
    )


def test_an_allocator_error_is_an_error_status() -> None:
    broken = claim(
        "c",
        req("gpus", cls="gpu.nvidia.com", selectors=['device.attributes["gpu.nvidia.com"].x == 1']),
        namespace="ns",
    )
    snap = cluster(1, [broken], {"p": named("c")})
    _, plugin_ = started(snap)
    cs, st, pod = CycleState(), ClusterState(snap), make_pod("p")
    assert plugin_.pre_filter(cs, pod, st).ok
    status = plugin_.filter_node(cs, pod, st, 0)
    assert status.code is Code.ERROR and "CEL runtime error: no such key: x" in status.message
    # tests/unit/scheduler/plugins/test_dynamic_resources_errors.py: what the framework makes of it


def test_score_prefers_the_node_with_the_first_choice() -> None:
    big = 'device.attributes["gpu.nvidia.com"].big == true'
    small = [rslice("s0", [dev(f"s{i}", big=False) for i in range(2)], node="n0")]
    large = [rslice("s1", [dev("b0", big=True), dev("s1", big=False)], node="n1")]
    c = claim(
        "c",
        first("g", sub("big", cls="any", selectors=[big]), sub("small", cls="any")),
        namespace="ns",
    )
    snap = cluster(2, [c], {"p": named("c")}, slices=[*small, *large])
    assert snap.dra is not None
    snap = replace(snap, dra=replace(snap.dra, classes={"any": dclass("any")}))
    decision = scheduler().decide(snap, [make_pod("p")])
    (binding,) = decision.bindings
    assert binding.node == "n1"
    allocation = written(decision)["ns/c"].status.allocation
    assert allocation is not None and allocation.devices.results[0].request == "g/big"


def test_pods_without_claims_are_untouched() -> None:
    assert len(scheduler().decide(cluster(1, [], {}), [make_pod("p")]).bindings) == 1
    plain = make_cluster([8])
    assert len(scheduler().decide(plain, [make_pod("p")]).bindings) == 1


def test_reserve_and_unreserve_track_in_flight_allocations() -> None:
    shared = claim("c", req("gpus", 8, cls="gpu.nvidia.com"), namespace="ns")
    snap = cluster(1, [shared], {"a": named("c"), "b": named("c")})
    fw, p = started(snap)
    st, cs = ClusterState(snap), CycleState()
    a, b = make_pod("a"), make_pod("b")
    assert p.pre_filter(cs, a, st).ok and p.filter_node(cs, a, st, 0).ok
    assert p.reserve(cs, a, st, 0).ok
    assert list(fw.writes.pending) == ["ns/c"]
    # While a's allocation is in flight, b (sharing the claim) must wait.
    status = p.pre_filter(CycleState(), b, st)
    assert status.message == "resource claim ns/c is in the process of being allocated"
    fw.run_unreserve(cs, a, st, 0)
    assert fw.writes.pending == {}
    assert p.pre_filter(CycleState(), b, st).ok


def test_a_pod_that_waited_binds_its_pending_allocation() -> None:
    _, made, entry = templated("p1")
    allocation = AllocationResult(
        DeviceAllocationResult((Result("gpus", "gpu.nvidia.com", "n0", "gpu-0"),)),
        node_name_selector("n0"),
    )
    snap = cluster(
        1, [made], {"p1": entry}, pending={made.key: PendingAllocation("p1", allocation)}
    )
    fw, p = started(snap)
    assert p.pre_bind(CycleState(), make_pod("p1"), "n0").ok
    claim_now = fw.writes.written[made.key]
    assert claim_now.status.allocation == allocation and claim_now.is_reserved_for("p1")
    assert fw.writes.pending == {}


def test_pods_with_equal_requests_but_different_claims_are_judged_separately() -> None:
    good = claim("g", req("gpus", cls="gpu.nvidia.com"), namespace="ns")
    snap = cluster(1, [good], {"bad": named("missing"), "good": named("g")})
    decision = scheduler().decide(snap, [make_pod("bad"), make_pod("good")])
    assert [b.pod_uid for b in decision.bindings] == ["good"]
