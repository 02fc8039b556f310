"""The kubelet Topology Manager against the reference cases and properties."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.cases.merge_hints import run_json
from gpuplane.core.errors import InputError
from gpuplane.kubelet.device_manager import Device, device_hints
from gpuplane.kubelet.topology_manager.bitmask import BitMask, iterate_bitmasks
from gpuplane.kubelet.topology_manager.hints import TopologyHint, max_of_min_affinity_counts
from gpuplane.kubelet.topology_manager.merger import HintMerger, merge_permutation
from gpuplane.kubelet.topology_manager.numa_info import NumaInfo
from gpuplane.kubelet.topology_manager.policy import (
    PolicyName,
    PolicyOptions,
    merge_hints,
    parse_policy_options,
)

REF = Path(__file__).resolve().parents[4] / "shared/reference/topology-manager-examples.json"
CASES = json.loads(REF.read_text())


def hint(raw: dict[str, Any] | None) -> TopologyHint | None:
    if raw is None:
        return None
    aff = raw["affinity"]
    return TopologyHint(None if aff is None else BitMask.of(aff), raw["preferred"])


def nodes_of(h: TopologyHint) -> list[int]:
    """The NUMA nodes of a hint that has an affinity."""
    assert h.affinity is not None
    return h.affinity.nodes()


@pytest.mark.parametrize("case", CASES["merge_cases"], ids=lambda c: str(c["id"]))
def test_merge_cases(case: dict[str, Any]) -> None:
    assert run_json(json.dumps(case)) == case["expected"]


@pytest.mark.parametrize("case", CASES["compare_cases"], ids=lambda c: c["description"])
def test_compare_cases(case: dict[str, Any]) -> None:
    numa = NumaInfo((0, 1, 2, 3))
    merger = HintMerger(numa, [], numa.narrowest, case["best_non_preferred_affinity_count"])
    current, candidate = hint(case["current"]), hint(case["candidate"])
    assert candidate is not None
    got = merger.compare(current, candidate)
    assert got is (current if case["expected"] == "current" else candidate)


@pytest.mark.parametrize("case", CASES["max_of_min_cases"], ids=lambda c: str(c["expected"]))
def test_max_of_min(case: dict[str, Any]) -> None:
    lists = [[hint(h) for h in hints] for hints in case["hints"]]
    present = [[h for h in hints if h is not None] for hints in lists]
    assert present == lists  # the cases list hints, never a missing one
    assert max_of_min_affinity_counts(present) == case["expected"]


@pytest.mark.parametrize("case", CASES["device_hint_cases"], ids=lambda c: c["description"])
def test_device_hint_cases(case: dict[str, Any]) -> None:
    devices = {r: [Device(d["id"], d["numa"]) for d in ds] for r, ds in case["devices"].items()}
    mine: dict[str, list[str]] = {}
    elsewhere: dict[str, list[str]] = {}
    for owner, by_res in case["allocated"].items():
        target = mine if "this container" in owner else elsewhere
        for res, ids in by_res.items():
            target.setdefault(res, []).extend(ids)
    got = device_hints(case["numa_nodes"], devices, case["request"], mine, elsewhere)
    for res, expected in case["expected_hints"].items():
        if expected is None:
            assert got[res] is None
            continue
        have = sorted((nodes_of(h), h.preferred) for h in got[res] or [])
        assert have == sorted((e["affinity"], e["preferred"]) for e in expected)


def test_no_topology_and_not_enough_devices() -> None:
    devs = {"gpu": [Device("a", None), Device("b", None)]}
    assert device_hints([0, 1], devs, {"gpu": 1}, {}, {}) == {"gpu": None}
    devs = {"gpu": [Device("a", 0), Device("b", 1, healthy=False)]}
    assert device_hints([0, 1], devs, {"gpu": 2}, {}, {}) == {"gpu": []}


def test_bitmask_order() -> None:
    assert [m.nodes() for m in iterate_bitmasks([1, 0, 2])] == [
        [0],
        [1],
        [2],
        [0, 1],
        [0, 2],
        [1, 2],
        [0, 1, 2],
    ]
    assert BitMask.of([0, 1]).is_narrower_than(BitMask.of([2])) is False
    assert BitMask.of([1]).is_narrower_than(BitMask.of([2]))
    with pytest.raises(InputError, match="range 0-63"):
        BitMask.of([64])


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({"prefer-closest-numa-nodes": "yes"}, "a boolean"),
        ({"max-allowable-numa-nodes": "x"}, "an integer"),
        ({"max-allowable-numa-nodes": "4"}, "should not be less than 8"),
        ({"frobnicate": "1"}, "unknown Topology Manager Policy option"),
    ],
)
def test_option_errors(options: dict[str, str], needle: str) -> None:
    with pytest.raises(InputError, match=needle):
        parse_policy_options(options)


def test_too_many_numa_nodes_and_missing_distances() -> None:
    numa = NumaInfo(tuple(range(9)))
    with pytest.raises(InputError, match="more than 8 NUMA Nodes"):
        merge_hints(PolicyName.BEST_EFFORT, numa, [])
    assert merge_hints(PolicyName.BEST_EFFORT, numa, [], PolicyOptions(max_allowable_numa_nodes=16))
    with pytest.raises(InputError, match="NUMA distances"):
        merge_hints(
            PolicyName.BEST_EFFORT, NumaInfo((0, 1)), [], PolicyOptions(prefer_closest_numa=True)
        )


def test_none_policy_admits_without_merging() -> None:
    result = merge_hints(PolicyName.NONE, NumaInfo((0, 1)), [{"gpu": []}])
    assert result.admit and result.hint == TopologyHint(None, False)


def test_bad_json_is_located() -> None:
    with pytest.raises(InputError, match="<stdin>:1"):
        run_json("{nope")
    with pytest.raises(InputError, match="policy"):
        run_json(json.dumps({"policy": "strict", "numa_nodes": [0]}))
    short = {
        "policy": "best-effort",
        "numa_nodes": [0, 1],
        "numa_distances": {"0": [10]},
        "policy_options": {"prefer-closest-numa-nodes": "true"},
    }
    with pytest.raises(InputError, match=r"numa_distances\.0"):
        run_json(json.dumps(short))


# ----- properties -----

masks = st.lists(st.integers(0, 3), min_size=1, max_size=4, unique=True)
hints_st = st.builds(TopologyHint, st.one_of(st.none(), masks.map(BitMask.of)), st.booleans())
provider_lists = st.lists(st.lists(hints_st, min_size=1, max_size=3), min_size=0, max_size=3)


@settings(max_examples=300, deadline=None)
@given(lists=provider_lists)
def test_merge_properties(lists: list[list[TopologyHint]]) -> None:
    numa = NumaInfo((0, 1, 2, 3))
    providers = [{f"r{i}": hs} for i, hs in enumerate(lists)]
    best = merge_hints(PolicyName.BEST_EFFORT, numa, providers).hint
    merged = [merge_permutation(numa.default_affinity(), p) for p in itertools.product(*lists)]
    viable = [m for m in merged if m.affinity is not None and m.affinity.count() > 0]
    assert best.affinity is not None and best.affinity.count() > 0
    preferred = [m for m in viable if m.preferred]
    # A preferred merge wins whenever one exists, and then it is the narrowest preferred one.
    assert best.preferred == bool(preferred)
    if preferred:
        narrowest = min(len(nodes_of(m)) for m in preferred)
        assert best.affinity.count() == narrowest
    if not viable:
        assert best == TopologyHint(numa.default_affinity(), False)
    single = merge_hints(PolicyName.SINGLE_NUMA_NODE, numa, providers)
    if single.admit:
        assert single.hint.affinity is None or single.hint.affinity.count() == 1
    restricted = merge_hints(PolicyName.RESTRICTED, numa, providers)
    assert restricted.admit == best.preferred
