"""Pool gathering (generations, completeness, validity) and shared counters of partitionable
devices."""

from __future__ import annotations

from gpuplane.slicing.dra import limits
from gpuplane.slicing.dra.devices import ResourceSlice
from gpuplane.slicing.dra.node_selector import DraNode
from gpuplane.slicing.dra.outcome import Features, OutcomeKind
from gpuplane.slicing.dra.pools import gather_pools
from tests.unit.slicing.test_dra_support import NODE, chosen, claim, dev, req, rslice, run

ALL = req("all", mode=limits.ALL)


def test_only_the_newest_generation_counts() -> None:
    old = rslice("old", [dev("stale")], pool="p", gen=1)
    new = rslice("new", [dev("fresh")], pool="p", gen=2)
    assert chosen(run([claim("c", ALL)], [old, new])) == ["fresh"]
    assert chosen(run([claim("c", ALL)], [new, old])) == ["fresh"]


def test_an_incomplete_pool_is_skipped_and_fails_all_mode() -> None:
    half = rslice("half", [dev("d0")], pool="p", count=2)
    assert run([claim("c", req())], [half]).kind is OutcomeKind.NO_SOLUTION
    out = run([claim("c", ALL)], [half])
    assert out.kind is OutcomeKind.ERROR
    assert out.message == (
        "claim default/c, request all: asks for all devices, but resource pool "
        "gpu.nvidia.com/p is currently being updated"
    )
    other = rslice("other", [dev("d1")], pool="p", count=2)
    assert chosen(run([claim("c", req("g", 2))], [half, other])) == ["d0", "d1"]


def test_slices_for_other_nodes_complete_the_pool() -> None:
    mine = rslice("a", [dev("mine")], node="n0", pool="shared", count=2)
    theirs = rslice("b", [dev("theirs")], node="n1", pool="shared", count=2)
    assert chosen(run([claim("c", ALL)], [mine, theirs])) == ["mine"]
    (pool,) = gather_pools([mine, theirs], NODE)
    assert not pool.incomplete and [s.name for s in pool.other_slices] == ["b"]


def test_a_pool_being_replaced_elsewhere_is_ignored() -> None:
    mine = rslice("a", [dev("mine")], node="n0", pool="shared", gen=1, count=2)
    newer = rslice("b", [dev("theirs")], node="n1", pool="shared", gen=2, count=1)
    assert gather_pools([mine, newer], NODE) == ()


def test_invalid_pools() -> None:
    dup = rslice("a", [dev("d"), dev("d")], pool="bad")
    out = run([claim("c", req())], [dup])
    assert out.kind is OutcomeKind.NODE_ERROR
    assert out.message == "invalid resource pools were encountered"
    (pool,) = gather_pools([dup], NODE)
    assert pool.invalid_reason == "duplicate device name d"
    good = rslice("g", [dev("ok")], pool="good")
    assert chosen(run([claim("c", req())], [dup, good])) == ["ok"]
    assert run([claim("c", ALL)], [dup, good]).kind is OutcomeKind.ERROR


def test_slices_disagreeing_on_the_slice_count_make_the_pool_invalid() -> None:
    a = rslice("a", [dev("d0")], pool="p", count=1)
    b = rslice("b", [dev("d1")], pool="p", count=2)
    for order in ([a, b], [b, a]):
        (pool,) = gather_pools(order, NODE)
        assert pool.invalid


def test_counter_references_must_exist() -> None:
    counters = rslice("c", pool="p", count=2, counters={"set": {"mem": 8}})
    devices = rslice("d", [dev("x", consumes={"set": {"other": 1}})], pool="p", count=2)
    (pool,) = gather_pools([counters, devices], NODE)
    assert pool.invalid_reason == "counter other not found in counter set set"
    missing = rslice("d", [dev("x", consumes={"nope": {"mem": 1}})], pool="p", count=2)
    (pool,) = gather_pools([counters, missing], NODE)
    assert pool.invalid_reason == "counter set nope not found"


def _partitioned() -> list[ResourceSlice]:
    counters = rslice(
        "a-counters", pool="gpu0", count=2, counters={"g": {"mem": 8, "s0": 1, "s1": 1}}
    )
    devices = rslice(
        "b-devices",
        [
            dev("whole", consumes={"g": {"mem": 8, "s0": 1, "s1": 1}}),
            dev("half-0", consumes={"g": {"mem": 4, "s0": 1}}),
            dev("half-1", consumes={"g": {"mem": 4, "s1": 1}}),
            dev("wide-0", consumes={"g": {"mem": 6, "s0": 1}}),
        ],
        pool="gpu0",
        count=2,
    )
    return [counters, devices]


def test_counters_let_partitions_share_a_device() -> None:
    slices = _partitioned()
    assert chosen(run([claim("c", req())], slices)) == ["whole"]
    # The whole device blocks every partition; two halves fit together.
    two = claim("c", req("p", 2, selectors=['device.attributes["gpu.nvidia.com"].half == true']))
    halves = rslice(
        "b-devices",
        [
            dev("whole", consumes={"g": {"mem": 8, "s0": 1, "s1": 1}}, half=False),
            dev("half-0", consumes={"g": {"mem": 4, "s0": 1}}, half=True),
            dev("half-1", consumes={"g": {"mem": 4, "s1": 1}}, half=True),
        ],
        pool="gpu0",
        count=2,
    )
    assert chosen(run([two], [slices[0], halves])) == ["half-0", "half-1"]
    out = run([claim("c", req("g", 2))], slices)
    assert chosen(out) == ["half-0", "half-1"]  # whole takes everything, so it cannot pair


def test_allocated_partitions_consume_counters() -> None:
    slices = _partitioned()
    out = run([claim("c", req())], slices, allocated=[("gpu0", "half-0")])
    assert chosen(out) == ["half-1"]  # whole and wide-0 need slice s0
    taken = [("gpu0", "half-0"), ("gpu0", "half-1")]
    assert run([claim("c", req())], slices, allocated=taken).kind is OutcomeKind.NO_SOLUTION


def test_partitionable_devices_need_the_feature() -> None:
    out = run([claim("c", req())], _partitioned(), features=Features(partitionable_devices=False))
    assert out.kind is OutcomeKind.NO_SOLUTION


def test_node_matching_of_pools() -> None:
    (pool,) = gather_pools([rslice("s", [dev("d")], node="n0")], DraNode("n0", {}))
    assert pool.pool_id == "gpu.nvidia.com/n0"
    assert gather_pools([rslice("s", [dev("d")], node="n0")], DraNode("n1", {})) == ()
