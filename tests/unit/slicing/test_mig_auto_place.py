from __future__ import annotations

import json
from importlib import resources
from itertools import permutations
from typing import Any

import pytest

from gpuplane.slicing.mig.auto_place import (
    apply_counts,
    create_in_order,
    distinct_orderings,
    flatten_order,
)
from gpuplane.slicing.mig.catalog import get_mig_gpu
from gpuplane.slicing.mig.enumerate import layouts_by_vector, vector_to_counts

A100 = get_mig_gpu("A100-40GB")
H100 = get_mig_gpu("H100-80GB")
DATA = json.loads(
    resources.files("gpuplane.slicing").joinpath("data/profiles.json").read_text("utf-8")
)
_ID_TO_NAME = {p.profile_id: p.name for p in A100.profiles}


def _cgi(cmd: str) -> list[str]:
    """'nvidia-smi mig -cgi 9,3g.20gb -C' -> profile names in creation order."""
    items = cmd.split("-cgi ")[1].split()[0].split(",")
    return [_ID_TO_NAME[int(x)] if x.isdigit() else x for x in items]


@pytest.mark.parametrize("case", DATA["observed_auto_placements_A100_40GB"], ids=lambda c: c["cmd"])
def test_user_guide_auto_placements_are_reproduced(case: dict[str, Any]) -> None:
    layout = create_in_order(A100, _cgi(case["cmd"]))
    if isinstance(case["result"], str):  # "... fails: Insufficient Resources"
        assert layout is None
        return
    assert layout is not None
    expected = sorted((r["start"], r["profile"]) for r in case["result"])
    assert [(i.start, i.profile) for i in layout.instances] == expected


def test_flatten_order_is_largest_first_and_me_first() -> None:
    order = flatten_order(
        H100, {"1g.10gb": 2, "3g.40gb": 1, "1g.10gb+me": 1, "2g.20gb": 1, "1g.20gb": 1}
    )
    assert order == ["3g.40gb", "2g.20gb", "1g.10gb+me", "1g.20gb", "1g.10gb", "1g.10gb"]


def test_distinct_orderings_are_every_distinct_permutation_once() -> None:
    items = ["a", "a", "b", "c"]
    got = [tuple(o) for o in distinct_orderings(items)]
    assert len(got) == len(set(got)) == len(set(permutations(items))) == 12
    assert got[0] == tuple(items)  # mig-parted tries the flattened order first


def test_balanced_is_built_in_the_first_order() -> None:
    result = apply_counts(H100, {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1})
    assert result.layout is not None and result.attempts == 1
    assert result.layout.describe() == "1g.10gb@0 + 1g.10gb@1 + 2g.20gb@2 + 3g.40gb@4"


def test_a_failing_order_is_retried() -> None:
    # the user guide's failing creation order succeeds once reordered
    assert create_in_order(A100, ["1g.5gb", "1g.5gb", "2g.10gb", "3g.20gb"]) is None
    result = apply_counts(A100, {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1})
    assert result.layout is not None


def test_every_placeable_count_is_buildable_by_mig_parted() -> None:
    for vector in layouts_by_vector(A100):
        result = apply_counts(A100, vector_to_counts(A100, vector))
        assert result.layout is not None
        assert result.layout.counts() == vector_to_counts(A100, vector)


def test_impossible_counts_fail_after_every_ordering() -> None:
    result = apply_counts(A100, {"3g.20gb": 2, "1g.5gb": 1})
    assert result.layout is None and result.order == ()
    assert result.attempts == 3  # distinct orderings of (3g, 3g, 1g)
