from __future__ import annotations

import dataclasses
from itertools import combinations

import pytest

from gpuplane.slicing.mig.catalog import default_mig_catalog, get_mig_gpu
from gpuplane.slicing.mig.enumerate import (
    all_layouts,
    can_add,
    count_vector,
    counts_to_vector,
    dominates,
    is_maximal,
    layouts_by_vector,
    maximal_layouts,
    maximal_vectors,
    placeable,
    vector_to_counts,
)
from gpuplane.slicing.mig.layout import Instance, Layout, layout_violations
from gpuplane.slicing.mig.profiles import MigGpu

A100 = get_mig_gpu("A100-40GB")


def brute_force_layouts(gpu: MigGpu) -> set[frozenset[Instance]]:
    """Independent enumeration: every subset of starts per profile, combined profile by profile,
    each candidate checked with the rule checker."""
    per_profile = []
    for p in gpu.profiles:
        choices = []
        for r in range(p.max_instances + 1):
            for starts in combinations(p.starts, r):
                choices.append([Instance(s, p.name) for s in starts])
        per_profile.append(choices)
    found: set[frozenset[Instance]] = set()

    def rec(k: int, chosen: list[Instance]) -> None:
        if layout_violations(gpu, chosen):
            return  # adding instances never repairs a broken layout
        if k == len(per_profile):
            found.add(frozenset(chosen))
            return
        for choice in per_profile[k]:
            rec(k + 1, chosen + choice)

    rec(0, [])
    return found


def brute_force_maximal(gpu: MigGpu, layouts: set[frozenset[Instance]]) -> set[frozenset[Instance]]:
    candidates = [Instance(s, p.name) for p in gpu.profiles for s in p.starts]
    return {
        lay
        for lay in layouts
        if all(c in lay or layout_violations(gpu, [*lay, c]) for c in candidates)
    }


def test_enumeration_matches_brute_force() -> None:
    expected = brute_force_layouts(A100)
    got = [frozenset(lay.instances) for lay in all_layouts(A100)]
    assert len(got) == len(set(got)), "a layout was produced twice"
    assert set(got) == expected
    maximal = {frozenset(lay.instances) for lay in maximal_layouts(A100)}
    assert maximal == brute_force_maximal(A100, expected)


def test_counts_for_the_a100_geometry() -> None:
    # Same slice geometry on every model in the fact sheet.
    for gpu in default_mig_catalog().gpus.values():
        assert len(all_layouts(gpu)) == 2319
        assert len(maximal_layouts(gpu)) == 239
        assert len(layouts_by_vector(gpu)) == 128
        assert len(maximal_vectors(gpu)) == 44


def classic(gpu: MigGpu) -> MigGpu:
    """Only the five profiles of the original A100 chart (no +me, no double-memory 1g)."""
    keep = tuple(
        p
        for p in gpu.profiles
        if not p.media_extensions and not (p.compute_slices == 1 and p.memory_slices == 2)
    )
    return dataclasses.replace(gpu, profiles=keep)


def test_nineteen_classic_a100_configurations() -> None:
    # NVIDIA's A100 chart: 18 combinations before R510, 19 with 4g + 3g.
    maximal = maximal_layouts(classic(A100))
    assert len(maximal) == 19
    assert Layout((Instance(0, "4g.20gb"), Instance(4, "3g.20gb"))) in maximal
    pre_r510 = [
        lay
        for lay in maximal
        if {A100.profile(i.profile).compute_slices for i in lay.instances} != {3, 4}
    ]
    assert len(pre_r510) == 18


def test_order_is_fixed_largest_first_empty_last() -> None:
    layouts = all_layouts(A100)
    assert layouts[0].describe() == "7g.40gb@0"
    assert layouts[-1].is_empty
    assert all_layouts.__wrapped__(A100) == layouts  # recomputed, not only cached


def test_every_layout_is_valid_and_maximal_means_nothing_fits() -> None:
    for lay in all_layouts(A100):
        assert layout_violations(A100, list(lay.instances)) == []
        assert is_maximal(A100, lay) == (not can_add(A100, lay))
    for lay in maximal_layouts(A100):
        assert not can_add(A100, lay)


def test_vectors() -> None:
    counts = {"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 2}
    v = counts_to_vector(A100, counts)
    assert placeable(A100, v) and vector_to_counts(A100, v) == counts
    assert count_vector(A100, layouts_by_vector(A100)[v][0]) == v
    assert not placeable(A100, counts_to_vector(A100, {"3g.20gb": 2, "1g.5gb": 1}))
    # every placeable vector is covered by a maximal one
    for vec in layouts_by_vector(A100):
        assert any(dominates(m, vec) for m in maximal_vectors(A100))


def test_unknown_profile_in_counts() -> None:
    with pytest.raises(Exception, match="does not exist"):
        counts_to_vector(A100, {"3g.40gb": 1})
