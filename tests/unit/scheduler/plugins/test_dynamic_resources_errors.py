"""DynamicResources' Error statuses against its rejections, through the whole scheduler.

kube-scheduler 1.36: an allocator error in Filter (``statusError``) makes the framework fail the
pod's attempt (``running "DynamicResources" filter plugin: <error>``), with no other node tried
and no preemption; "cannot allocate all claims", invalid pools and a missing device class are
rejections (the pod is unschedulable), and the pod schedules wherever it can.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuplane.scheduler.framework.decision import SchedulingDecision, Unschedulable
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.slicing.dra.claims import ResourceClaim
from gpuplane.slicing.dra.devices import ResourceSlice
from gpuplane.slicing.dra.node_slices import node_resource_slices
from gpuplane.slicing.dra.outcome import NO_SUCH_KEY_HINT
from tests.unit.scheduler.factories import make_pod, make_scheduler
from tests.unit.scheduler.plugins.test_dynamic_resources import (
    PROFILE,
    SEED,
    cluster,
    named,
    scheduler,
)
from tests.unit.slicing.test_dra_support import claim, dev, req, rslice

# n0 publishes the seed node's GPUs (no attribute "x"); n1 one GPU with x = 1.
X_SELECTOR = 'device.attributes["gpu.nvidia.com"].x == 1'
SLICES = [
    *node_resource_slices(SEED, node_name="n0"),
    rslice("n1-gpus", [dev("gpu-0", type="gpu", x=1)], node="n1"),
]


def decide(snap: ClusterSnapshot, *, reference: bool = False) -> SchedulingDecision:
    s = make_scheduler([PROFILE], reference=reference) if reference else scheduler()
    return s.decide(snap, [make_pod("p")])


def only_failure(decision: SchedulingDecision) -> Unschedulable:
    assert decision.bindings == ()
    (failed,) = decision.unschedulable
    return failed


def one_claim(c: ResourceClaim, slices: Sequence[ResourceSlice] | None = None) -> ClusterSnapshot:
    return cluster(2, [c], {"p": named(c.name)}, slices=SLICES if slices is None else slices)


def test_an_allocator_error_fails_the_attempt_though_another_node_fits() -> None:
    broken = claim("c", req("gpus", cls="gpu.nvidia.com", selectors=[X_SELECTOR]), namespace="ns")
    for reference in (False, True):
        failed = only_failure(decide(one_claim(broken), reference=reference))
        assert failed.error and failed.clear_nomination and failed.nominated_node is None
        assert failed.message == (
            'running "DynamicResources" filter plugin: claim ns/c: selector #0: CEL runtime '
            f"error: no such key: x{NO_SUCH_KEY_HINT}"
        )
        assert failed.diagnosis is not None and failed.diagnosis.groups == ()


def test_without_the_error_the_pod_binds_on_the_node_that_fits() -> None:
    guarded = f'has(device.attributes["gpu.nvidia.com"].x) && {X_SELECTOR}'
    fine = claim("c", req("gpus", cls="gpu.nvidia.com", selectors=[guarded]), namespace="ns")
    decision = decide(one_claim(fine))
    assert [(b.pod_uid, b.node) for b in decision.bindings] == [("p", "n1")]


def test_too_many_devices_is_an_error_not_a_rejection() -> None:
    greedy = claim("c", req("gpus", 33, cls="gpu.nvidia.com"), namespace="ns")
    failed = only_failure(decide(one_claim(greedy)))
    assert failed.error
    assert failed.message == (
        'running "DynamicResources" filter plugin: claim ns/c: number of requested devices 33 '
        "exceeds the claim limit of 32"
    )


def test_a_request_without_a_class_is_a_prefilter_error() -> None:
    nameless = claim("c", req("gpus", cls=""), namespace="ns")
    failed = only_failure(decide(one_claim(nameless)))
    assert failed.error
    assert failed.message == (
        'running PreFilter plugin "DynamicResources": request gpus: unsupported request type'
    )


def test_no_solution_is_unschedulable_with_the_fit_error() -> None:
    nine = claim("c", req("gpus", 9, cls="gpu.nvidia.com"), namespace="ns")
    failed = only_failure(decide(one_claim(nine)))
    assert not failed.error
    # The FitError; preemption's part follows (tried, as the plugin's rejections are
    # Unschedulable here: see docs/dra.md on UnschedulableAndUnresolvable).
    assert failed.message.startswith("0/2 nodes are available: 2 cannot allocate all claims. ")


def test_a_missing_class_is_unschedulable_in_prefilter() -> None:
    lost = claim("c", req("gpus", cls="missing"), namespace="ns")
    failed = only_failure(decide(one_claim(lost)))
    assert not failed.error
    assert failed.message.startswith(
        "0/2 nodes are available: request gpus: device class missing does not exist. "
    )


def test_an_invalid_pool_rejects_only_its_node() -> None:
    """n0's pool publishes gpu-0 twice (invalid); n1's pool is fine: the pod binds on n1, and
    with n0 alone it is unschedulable with the allocator's node-local message."""
    halves = [rslice(f"n0-half-{i}", [dev("gpu-0", type="gpu")], count=2) for i in range(2)]
    good = rslice("n1-gpus", [dev("gpu-0", type="gpu")], node="n1")
    one = claim("c", req("gpus", cls="gpu.nvidia.com"), namespace="ns")
    decision = decide(one_claim(one, [*halves, good]))
    assert [(b.pod_uid, b.node) for b in decision.bindings] == [("p", "n1")]
    snap = cluster(1, [one], {"p": named("c")}, slices=halves)
    failed = only_failure(decide(snap))
    assert not failed.error
    assert failed.message.startswith(
        "0/1 nodes are available: 1 invalid resource pools were encountered."
    )
