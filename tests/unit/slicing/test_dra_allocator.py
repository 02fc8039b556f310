"""The structured allocator's rules, each with a case that passes and one that does not."""

from __future__ import annotations

from gpuplane.slicing.dra import limits
from gpuplane.slicing.dra.allocation import OpaqueDeviceConfiguration
from gpuplane.slicing.dra.claims import DeviceClaimConfiguration
from gpuplane.slicing.dra.devices import DeviceTaint, DeviceToleration
from gpuplane.slicing.dra.node_selector import (
    DraNode,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
)
from gpuplane.slicing.dra.outcome import Features, OutcomeKind
from tests.unit.slicing.test_dra_support import (
    DRIVER,
    chosen,
    claim,
    dclass,
    dev,
    first,
    gpus,
    match,
    req,
    rslice,
    run,
    sub,
)


def test_exact_count_takes_the_first_free_devices_in_slice_order() -> None:
    out = run([claim("c", req("g", 2))], [gpus(n=4)])
    assert chosen(out) == ["gpu-0", "gpu-1"]
    result = out.results[0].devices.results[0]
    assert (result.request, result.driver, result.pool) == ("g", DRIVER, "n0")
    # Node-local devices pin the claim to the node.
    selector = out.results[0].node_selector
    assert selector is not None and selector.matches(DraNode("n0", {}))
    assert not selector.matches(DraNode("n1", {}))


def test_not_enough_devices_is_no_solution() -> None:
    assert run([claim("c", req("g", 5))], [gpus(n=4)]).kind is OutcomeKind.NO_SOLUTION


def test_devices_held_by_other_claims_are_skipped() -> None:
    out = run([claim("c", req("g", 2))], [gpus(n=4)], allocated=[("n0", "gpu-0"), ("n0", "gpu-2")])
    assert chosen(out) == ["gpu-1", "gpu-3"]
    taken = [("n0", f"gpu-{i}") for i in range(3)]
    assert (
        run([claim("c", req("g", 2))], [gpus(n=4)], allocated=taken).kind is OutcomeKind.NO_SOLUTION
    )


def test_a_device_is_used_once_across_requests_and_claims() -> None:
    out = run([claim("a", req("x"), req("y")), claim("b", req("z"))], [gpus(n=3)])
    assert [chosen(out, 0), chosen(out, 1)] == [["gpu-0", "gpu-1"], ["gpu-2"]]
    short = run([claim("a", req("x")), claim("b", req("z"))], [gpus(n=1)])
    assert short.kind is OutcomeKind.NO_SOLUTION


def test_admin_access_may_use_allocated_devices_but_not_twice_in_one_claim() -> None:
    taken = [("n0", "gpu-0"), ("n0", "gpu-1")]
    out = run([claim("c", req("mon", 2, admin=True))], [gpus(n=2)], allocated=taken)
    assert chosen(out) == ["gpu-0", "gpu-1"]
    assert all(r.admin_access for r in out.results[0].devices.results)
    three = run([claim("c", req("mon", 3, admin=True))], [gpus(n=2)], allocated=taken)
    assert three.kind is OutcomeKind.NO_SOLUTION
    off = run([claim("c", req("mon", admin=True))], [gpus()], features=Features(admin_access=False))
    assert off.kind is OutcomeKind.ERROR and "admin access is requested" in off.message


def test_admin_access_of_one_claim_blocks_a_device_for_another_claim_in_the_same_pod() -> None:
    out = run([claim("a", req("mon", admin=True)), claim("b", req("g"))], [gpus(n=1)])
    assert out.kind is OutcomeKind.NO_SOLUTION


def test_all_mode_takes_every_matching_device() -> None:
    sel = 'device.attributes["gpu.nvidia.com"].index >= 2'
    out = run([claim("c", req("all", mode=limits.ALL, selectors=[sel]))], [gpus(n=4)])
    assert chosen(out) == ["gpu-2", "gpu-3"]


def test_all_mode_fails_when_one_matching_device_is_in_use_or_none_match() -> None:
    all_req = req("all", mode=limits.ALL)
    busy = run([claim("c", all_req)], [gpus(n=3)], allocated=[("n0", "gpu-1")])
    assert busy.kind is OutcomeKind.NO_SOLUTION
    none = run([claim("c", req("all", mode=limits.ALL, selectors=["false"]))], [gpus(n=3)])
    assert none.kind is OutcomeKind.NO_SOLUTION
    admin = req("all", mode=limits.ALL, admin=True)
    ok = run([claim("c", admin)], [gpus(n=3)], allocated=[("n0", "gpu-1")])
    assert chosen(ok) == ["gpu-0", "gpu-1", "gpu-2"]


def test_all_mode_with_a_violated_constraint_is_an_error() -> None:
    s = rslice("s", [dev("a", numa=0), dev("b", numa=1)])
    c = claim("c", req("all", mode=limits.ALL), constraints=[match(f"{DRIVER}/numa")])
    out = run([c], [s])
    assert out.kind is OutcomeKind.ERROR
    assert "cannot add device gpu.nvidia.com/n0/b because a claim constraint" in out.message


def test_first_available_falls_back_in_order() -> None:
    big = 'device.attributes["gpu.nvidia.com"].mem == 80'
    s = rslice("s", [dev("small-0", mem=40), dev("small-1", mem=40)])
    c = claim("c", first("g", sub("big", selectors=[big]), sub("two-small", 2)))
    out = run([c], [s])
    assert chosen(out) == ["small-0", "small-1"]
    assert {r.request for r in out.results[0].devices.results} == {"g/two-small"}
    with_big = rslice("s", [dev("small-0", mem=40), dev("big-0", mem=80)])
    assert chosen(run([c], [with_big])) == ["big-0"]


def test_first_available_needs_the_feature() -> None:
    c = claim("c", first("g", sub("a")))
    out = run([c], [gpus()], features=Features(prioritized_list=False))
    assert out.kind is OutcomeKind.ERROR and "DRAPrioritizedList feature is disabled" in out.message


def test_match_attribute_backtracks_to_a_consistent_set() -> None:
    s = rslice("s", [dev("d0", numa=0), dev("d1", numa=1), dev("d2", numa=1)])
    c = claim("c", req("a"), req("b"), constraints=[match(f"{DRIVER}/numa", "a", "b")])
    assert chosen(run([c], [s])) == ["d1", "d2"]
    alone = rslice("s", [dev("d0", numa=0), dev("d1", numa=1)])
    assert run([c], [alone]).kind is OutcomeKind.NO_SOLUTION


def test_match_attribute_requires_the_attribute_and_its_type() -> None:
    c = claim("c", req("g", 2), constraints=[match(f"{DRIVER}/numa")])
    missing = rslice("s", [dev("d0", numa=0), dev("d1")])
    assert run([c], [missing]).kind is OutcomeKind.NO_SOLUTION
    mixed = rslice("s", [dev("d0", numa=0), dev("d1", numa="0")])
    assert run([c], [mixed]).kind is OutcomeKind.NO_SOLUTION
    other_domain = claim("c", req("g", 2), constraints=[match("example.com/numa")])
    assert run([other_domain], [rslice("s", [dev("d0", numa=0), dev("d1", numa=0)])]).kind is (
        OutcomeKind.NO_SOLUTION
    )


def test_constraint_on_a_subrequest_and_on_other_requests_only() -> None:
    s = rslice("s", [dev("d0", numa=0), dev("d1", numa=1), dev("d2", numa=1)])
    c = claim(
        "c",
        first("g", sub("one"), sub("other")),
        req("free"),
        constraints=[match(f"{DRIVER}/numa", "g/one", "free")],
    )
    # g/one takes d0; "free" must match numa 0 and cannot; the search then moves g to d1.
    assert chosen(run([c], [s])) == ["d1", "d2"]


def test_the_32_device_limit() -> None:
    out = run([claim("c", req("g", 33))], [gpus(n=40)])
    assert out.kind is OutcomeKind.ERROR
    assert (
        out.message
        == "claim default/c: number of requested devices 33 exceeds the claim limit of 32"
    )
    c = claim("c", first("a", sub("twenty", 20), sub("five", 5)), req("b", 20))
    out = run([c], [gpus(n=48)])
    assert len(chosen(out)) == 25
    assert {r.request for r in out.results[0].devices.results} == {"a/five", "b"}


def test_a_selector_error_aborts_but_devices_in_use_are_never_evaluated() -> None:
    s = rslice("s", [dev("d0", index=0), dev("d1")])
    c = claim("c", req("g", selectors=['device.attributes["gpu.nvidia.com"].index == 1']))
    out = run([c], [s], allocated=[])
    assert out.kind is OutcomeKind.ERROR
    assert out.message.startswith(
        "claim default/c: selector #0: CEL runtime error: no such key: index. Consider using"
    )
    assert run([c], [s], allocated=[("n0", "d1")]).kind is OutcomeKind.NO_SOLUTION


def test_class_selectors_apply_and_a_missing_class_is_an_error() -> None:
    s = rslice("s", [dev("a", kind="x"), dev("b", kind="y")])
    only_y = dclass("y-only", 'device.attributes["gpu.nvidia.com"].kind == "y"')
    assert chosen(run([claim("c", req(cls="y-only"))], [s], [only_y])) == ["b"]
    out = run([claim("c", req(cls="nope"))], [s], [only_y])
    # structured/allocator.go: the class lister's NotFound error follows the colon.
    assert out.kind is OutcomeKind.ERROR
    assert out.message == (
        "claim default/c, request gpu: could not retrieve device class nope: "
        'deviceclass.resource.k8s.io "nope" not found'
    )


def test_taints_need_tolerations() -> None:
    s = rslice("s", [dev("t", taints=[DeviceTaint("bad", "1", "NoSchedule")]), dev("ok")])
    assert chosen(run([claim("c", req("g"))], [s])) == ["ok"]
    tol = DeviceToleration("bad", "Equal", "1", "NoSchedule")
    assert chosen(run([claim("c", req("g", tolerations=[tol]))], [s])) == ["t"]
    info = rslice("s", [dev("t", taints=[DeviceTaint("bad", "1", "None")])])
    assert chosen(run([claim("c", req("g"))], [info])) == ["t"]
    off = run([claim("c", req("g"))], [s], features=Features(device_taints=False))
    assert chosen(off) == ["t"]
    result = run([claim("c", req("g", tolerations=[tol]))], [s]).results[0]
    assert result.devices.results[0].tolerations == (tol,)


def test_pools_are_tried_in_driver_and_pool_name_order_and_slices_by_name() -> None:
    b = rslice("z-slice", [dev("b0")], pool="b-pool", node="n0")
    a2 = rslice("b-slice", [dev("a-second")], pool="a-pool", node="n0", count=2)
    a1 = rslice("a-slice", [dev("a-first")], pool="a-pool", node="n0", count=2)
    assert chosen(run([claim("c", req("g", 3))], [b, a2, a1])) == ["a-first", "a-second", "b0"]


def test_config_from_class_and_claim() -> None:
    cfg = OpaqueDeviceConfiguration(DRIVER, {"sharing": "TimeSlicing"})
    mine = OpaqueDeviceConfiguration(DRIVER, {"x": 1})
    c = claim(
        "c",
        req("a"),
        req("b"),
        config=[DeviceClaimConfiguration(("a",), mine), DeviceClaimConfiguration((), mine)],
    )
    out = run([c], [gpus()], [dclass("gpu", config=[cfg])])
    configs = out.results[0].devices.config
    assert [(x.source, x.requests) for x in configs] == [
        (limits.CONFIG_FROM_CLASS, ()),  # the class serves both requests: requests cleared
        (limits.CONFIG_FROM_CLAIM, ("a",)),
        (limits.CONFIG_FROM_CLAIM, ()),
    ]


def test_node_selection_of_slices() -> None:
    other = gpus(node="n1", n=2)
    assert run([claim("c", req())], [other]).kind is OutcomeKind.NO_SOLUTION
    shared = rslice("net", [dev("nic")], node=None, pool="fabric", all_nodes=True)
    out = run([claim("c", req())], [shared])
    assert chosen(out) == ["nic"] and out.results[0].node_selector is None
    zone = NodeSelector((NodeSelectorTerm((NodeSelectorRequirement("zone", "In", ("a",)),)),))
    zonal = rslice("z", [dev("z0")], node=None, pool="zonal", selector=zone)
    assert run([claim("c", req())], [zonal]).kind is OutcomeKind.NO_SOLUTION
    out = run([claim("c", req())], [zonal], node=DraNode("n0", {"zone": "a"}))
    assert out.results[0].node_selector == zone


def test_per_device_node_selection() -> None:
    s = rslice(
        "s",
        [dev("far", node_name="n1"), dev("near", node_name="n0")],
        node=None,
        pool="p",
        per_device=True,
    )
    out = run([claim("c", req())], [s])
    assert chosen(out) == ["near"]
    assert out.results[0].node_selector is not None
    assert out.results[0].node_selector.matches(DraNode("n0", {}))


def test_a_claim_without_requests_gets_an_empty_allocation() -> None:
    out = run([claim("c")], [])
    assert out.ok and out.results[0].devices.results == () and out.results[0].node_selector is None
