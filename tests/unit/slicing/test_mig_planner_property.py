"""The planner against an exhaustive search on small clusters (1-3 GPUs).

The search knows nothing of option classes, dominance or integer programs: for every GPU it
tries every target layout (nvml: all valid layouts; mig-parted: the current one or what
mig-parted builds from any counts), every set of in-use pods kept in place, and every number of
instances served per profile; then combines GPUs by dynamic programming over the total served,
keeping the lexicographically best (used, reconfigured, evicted) for each total.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations, product

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.slicing.mig.auto_place import apply_counts
from gpuplane.slicing.mig.catalog import get_mig_gpu
from gpuplane.slicing.mig.enumerate import all_layouts, layouts_by_vector, vector_to_counts
from gpuplane.slicing.mig.layout import Layout
from gpuplane.slicing.mig.plan_types import GpuState, MigPlanSettings, MigSnapshot, make_snapshot
from gpuplane.slicing.mig.planner import decide

GPU = get_mig_gpu("H100-80GB")
LAYOUTS = all_layouts(GPU)
Outcome = tuple[int, int, int]  # (used, reconfigured, evicted)


def _targets(state: GpuState, mode: str) -> list[Layout]:
    if mode == "nvml":
        return list(LAYOUTS)
    out = [state.layout]
    for v in layouts_by_vector(GPU):
        built = apply_counts(GPU, vector_to_counts(GPU, v)).layout
        if built is not None and built.counts() != state.layout.counts():
            out.append(built)
    return out


def _gpu_outcomes(
    state: GpuState, names: list[str], wanted: Counter[str], evict: bool, mode: str
) -> dict[tuple[int, ...], Outcome]:
    best: dict[tuple[int, ...], Outcome] = {}
    for target in _targets(state, mode):
        reconfigured = target != state.layout
        keepable = set(state.in_use) & set(target.instances)
        if mode == "mig-parted" and reconfigured:
            keepable = set()
        capacity = target.counts()
        for r in range(len(keepable) + 1):
            for kept in combinations(sorted(keepable), r):
                if not evict and len(kept) != len(state.in_use):
                    continue
                kept_counts = Counter(i.profile for i in kept)
                ranges = [range(kept_counts[n], min(capacity[n], wanted[n]) + 1) for n in names]
                for served in product(*ranges):
                    used = int(sum(served) > 0)
                    outcome = (used, int(reconfigured), len(state.in_use) - len(kept))
                    if served not in best or outcome < best[served]:
                        best[served] = outcome
    return best


def brute_force(snap: MigSnapshot, evict: bool, mode: str) -> tuple[int, Outcome]:
    """(instances served, best (used, reconfigured, evicted)) over all plans."""
    wanted = Counter(snap.demand_counts())
    for g in snap.gpus:
        wanted.update(i.profile for i in g.in_use)
    names = sorted(wanted)
    totals: dict[tuple[int, ...], Outcome] = {tuple(0 for _ in names): (0, 0, 0)}
    for state in snap.gpus:
        outcomes = _gpu_outcomes(state, names, wanted, evict, mode)
        merged: dict[tuple[int, ...], Outcome] = {}
        for total, value in totals.items():
            for served, outcome in outcomes.items():
                new = tuple(a + b for a, b in zip(total, served, strict=True))
                if any(n > wanted[name] for n, name in zip(new, names, strict=True)):
                    continue
                cost = (value[0] + outcome[0], value[1] + outcome[1], value[2] + outcome[2])
                if new not in merged or cost < merged[new]:
                    merged[new] = cost
        totals = merged
    served, cost = max(totals.items(), key=lambda kv: (sum(kv[0]), tuple(-x for x in kv[1])))
    return sum(served), cost


@st.composite
def clusters(draw: st.DrawFn) -> tuple[MigSnapshot, bool, str]:
    n = draw(st.integers(1, 3))
    gpus = []
    for i in range(n):
        if draw(st.booleans()):
            gpus.append(GpuState(i, GPU))
            continue
        layout = LAYOUTS[draw(st.integers(0, len(LAYOUTS) - 1))]
        busy = draw(
            st.lists(st.sampled_from(layout.instances), max_size=2, unique=True)
            if layout.instances
            else st.just([])
        )
        gpus.append(GpuState(i, GPU, layout, frozenset(busy)))
    names = draw(st.lists(st.sampled_from(GPU.profile_names), min_size=1, max_size=3, unique=True))
    demand = {name: draw(st.integers(0, 4)) for name in names}
    return (
        make_snapshot(gpus, demand),
        draw(st.booleans()),
        draw(st.sampled_from(["nvml", "mig-parted"])),
    )


@settings(max_examples=60, deadline=None)
@given(clusters())
def test_planner_is_optimal(case: tuple[MigSnapshot, bool, str]) -> None:
    snap, evict, mode = case
    plan = decide(snap, MigPlanSettings(allow_evict=evict, apply_mode=mode))
    assert plan.optimal
    served = sum(plan.placed.values()) + sum(len(t.kept) for t in plan.targets)
    assert (served, (plan.gpus_used, plan.reconfigured, plan.evicted)) == brute_force(
        snap, evict, mode
    )
    assert plan.lower_bound == plan.gpus_used
    if not evict:
        for t, g in zip(plan.targets, snap.gpus, strict=True):
            assert g.in_use <= set(t.layout.instances) and not t.evicted
