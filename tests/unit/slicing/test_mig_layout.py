from __future__ import annotations

import pytest

from gpuplane.core.errors import InputError, Location
from gpuplane.slicing.mig.catalog import get_mig_gpu
from gpuplane.slicing.mig.layout import (
    Instance,
    Layout,
    is_valid_layout,
    layout_violations,
    make_layout,
)

A100 = get_mig_gpu("A100-40GB")
H100 = get_mig_gpu("H100-80GB")


def inst(text: str) -> list[Instance]:
    """'3g.20gb@4 + 1g.5gb@0' -> instances."""
    out = []
    for part in text.split("+ "):
        name, start = part.strip().rsplit("@", 1)
        out.append(Instance(int(start), name))
    return out


# Valid full geometries the MIG user guide shows (shared/reference/mig.md).
VALID = [
    "1g.5gb@0 + 1g.5gb@1 + 1g.5gb@2 + 1g.5gb@3 + 1g.5gb@4 + 1g.5gb@5 + 1g.5gb@6",
    "1g.10gb@0 + 1g.10gb@2 + 1g.10gb@4 + 1g.10gb@6",
    "2g.10gb@0 + 2g.10gb@2 + 2g.10gb@4 + 1g.5gb@6",
    "3g.20gb@0 + 3g.20gb@4",
    "4g.20gb@0 + 3g.20gb@4",
    "3g.20gb@4 + 2g.10gb@0 + 1g.5gb@2 + 1g.5gb@3",
    "7g.40gb@0",
    "1g.5gb+me@3",
]


@pytest.mark.parametrize("text", VALID)
def test_user_guide_geometries_are_valid(text: str) -> None:
    assert layout_violations(A100, inst(text)) == []


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("1g.50gb@0", "unknown-profile"),
        ("1g.5gb@7", "invalid-start"),  # slice 7 only via 1g-double@6, 3g@4, 7g@0
        ("2g.10gb@6", "invalid-start"),
        ("3g.20gb@2", "invalid-start"),
        ("3g.20gb@0 + 2g.10gb@2", "memory-overlap"),
        ("4g.20gb@0 + 2g.10gb@4 + 1g.10gb@6 + 1g.5gb@7", "invalid-start"),
        ("4g.20gb@0 + 1g.10gb@4 + 2g.10gb@4", "memory-overlap"),
        ("3g.20gb@0 + 1g.10gb@4 + 1g.10gb@6 + 1g.5gb+me@4", "memory-overlap"),
        ("1g.5gb+me@0 + 1g.5gb+me@1", "one-media-extension"),
    ],
)
def test_each_rule_broken_once(text: str, rule: str) -> None:
    rules = [v.rule for v in layout_violations(A100, inst(text))]
    assert rule in rules


def test_compute_slices_rule() -> None:
    # With valid starts and no overlap the geometry never exceeds 7 compute slices (4g@0 + 2g@4
    # + 1g@6 is the most), so the rule shows up next to an overlap.
    assert layout_violations(A100, inst("4g.20gb@0 + 2g.10gb@4 + 1g.5gb@6")) == []
    over = [
        v
        for v in layout_violations(A100, inst("7g.40gb@0 + 1g.5gb@0"))
        if v.rule == "compute-slices"
    ]
    assert over and "8 compute slices" in over[0].message


def test_max_instances_rule() -> None:
    # 1g.10gb (double memory) allows 4; five can only be listed with overlaps, but the count rule
    # is reported on its own.
    rules = {
        v.rule
        for v in layout_violations(
            A100, inst("1g.10gb@0 + 1g.10gb@2 + 1g.10gb@4 + 1g.10gb@6 + 1g.10gb@0")
        )
    }
    assert "max-instances" in rules


def test_4g_3g_needs_r510() -> None:
    layout = inst("4g.20gb@0 + 3g.20gb@4")
    assert [v.rule for v in layout_violations(A100, layout, driver_major=470)] == ["driver-4g-3g"]
    assert layout_violations(A100, layout, driver_major=510) == []


def test_make_layout_sorts_and_canonicalises_names() -> None:
    layout = make_layout(H100, [Instance(4, "3g.40gb"), Instance(0, "1g.10gb.me")])
    assert layout.instances == (Instance(0, "1g.10gb+me"), Instance(4, "3g.40gb"))
    assert layout.describe() == "1g.10gb+me@0 + 3g.40gb@4"
    assert layout.counts()["3g.40gb"] == 1


def test_make_layout_error_names_the_instance() -> None:
    with pytest.raises(InputError) as err:
        make_layout(
            A100,
            inst("3g.20gb@0 + 2g.10gb@2"),
            location=Location("cur.yaml", 3, "gpus[1].instances"),
        )
    assert err.value.location.field == "gpus[1].instances[1]"
    assert "memory slice 2" in err.value.problem and "memory-overlap" in str(err.value.expected)


def test_layout_requires_sorted_instances() -> None:
    with pytest.raises(ValueError):
        Layout((Instance(4, "3g.20gb"), Instance(0, "3g.20gb")))
    assert is_valid_layout(A100, [])
