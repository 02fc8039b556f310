"""The planner's fast paths (numpy Pareto filter, array-built options, heap spreading) against
their plain definitions: the planner must produce the same plans as before they were added."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.slicing.mig.catalog import get_mig_gpu
from gpuplane.slicing.mig.enumerate import (
    CountVector,
    all_layouts,
    maximal_layouts,
    pareto_maximal,
    pareto_maximal_reference,
)
from gpuplane.slicing.mig.layout import EMPTY_LAYOUT, Instance, Layout
from gpuplane.slicing.mig.plan_options import (
    GpuClass,
    Option,
    _nvml_pairs,
    _nvml_pairs_reference,
    class_options,
)
from gpuplane.slicing.mig.planner import _spread

H100 = get_mig_gpu("H100-80GB")
A100 = get_mig_gpu("A100-40GB")


def _vectors(width: int, high: int) -> st.SearchStrategy[list[CountVector]]:
    row = st.tuples(*[st.integers(0, high)] * width)
    return st.lists(row, max_size=40)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 8).flatmap(lambda w: _vectors(w, 3)))
def test_pareto_matches_the_definition_on_small_counts(vectors: list[CountVector]) -> None:
    assert pareto_maximal(vectors) == pareto_maximal_reference(vectors)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(-5, 2**40), st.integers(-5, 2**40), st.integers(0, 2**40)),
        max_size=25,
    )
)
def test_pareto_matches_the_definition_when_rows_cannot_be_packed(
    vectors: list[CountVector],
) -> None:
    # Negative or huge values take the column-by-column path.
    assert pareto_maximal(vectors) == pareto_maximal_reference(vectors)


def test_pareto_of_duplicates_and_of_nothing() -> None:
    assert pareto_maximal([]) == []
    assert pareto_maximal([(1, 0), (1, 0), (0, 1), (0, 0)]) == [(1, 0), (0, 1)]


def _class(model: str, layout_pick: int, in_use_bits: int, maximal: bool) -> GpuClass:
    gpu = get_mig_gpu(model)
    pool = maximal_layouts(gpu) if maximal else all_layouts(gpu)
    layout = pool[layout_pick % len(pool)]
    in_use = frozenset(i for k, i in enumerate(layout.instances) if in_use_bits >> k & 1)
    return GpuClass(gpu, layout, in_use, (0,))


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["H100-80GB", "A100-40GB"]),
    st.integers(0, 10_000),
    st.integers(0, 255),
    st.booleans(),
    st.booleans(),
)
def test_nvml_pairs_match_the_layout_loop(
    model: str, pick: int, bits: int, maximal: bool, allow_evict: bool
) -> None:
    cls = _class(model, pick, bits, maximal)
    assert _nvml_pairs(cls, allow_evict) == _nvml_pairs_reference(cls, allow_evict)


def test_nvml_pairs_for_empty_gpus_and_a_pod_outside_every_layout() -> None:
    empty = GpuClass(H100, EMPTY_LAYOUT, frozenset(), (0, 1, 2))
    assert _nvml_pairs(empty, False) == _nvml_pairs_reference(empty, False)
    # A start no -lgipp placement allows (never produced by make_layout): no layout keeps it.
    odd = Layout((Instance(7, "2g.20gb"),))
    cls = GpuClass(H100, odd, frozenset(odd.instances), (0,))
    for evict in (False, True):
        assert _nvml_pairs(cls, evict) == _nvml_pairs_reference(cls, evict)
    assert _nvml_pairs(cls, False) == []


def _spread_reference(
    cls: GpuClass, chosen: list[Option], served: dict[str, int]
) -> list[Counter[str]]:
    """The planner's spreading rule as first written: scan for the least-served GPU with room."""
    names = [p.name for p in cls.model.profiles]
    out = [Counter({names[k]: n for k, n in enumerate(o.kept) if n}) for o in chosen]
    for name, total in served.items():
        k = names.index(name)
        for _ in range(total - sum(c[name] for c in out)):
            room = [i for i, o in enumerate(chosen) if o.used and out[i][name] < o.supply[k]]
            if not room:
                break
            out[min(room, key=lambda i: (sum(out[i].values()), i))][name] += 1
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["H100-80GB", "A100-40GB"]),
    st.integers(0, 10_000),
    st.integers(0, 255),
    st.lists(st.integers(0, 1_000), min_size=1, max_size=12),
    st.lists(st.integers(0, 30), min_size=7, max_size=7),
)
def test_spread_matches_the_scan(
    model: str, pick: int, bits: int, option_picks: list[int], served_counts: list[int]
) -> None:
    cls = _class(model, pick, bits, maximal=True)
    options = class_options(cls, allow_evict=True, apply_mode="nvml")
    chosen = [options[p % len(options)] for p in option_picks]
    names = [p.name for p in cls.model.profiles]
    served = {name: n for name, n in zip(names, served_counts, strict=False) if n}
    assert _spread(cls, chosen, served) == _spread_reference(cls, chosen, served)
