from __future__ import annotations

import dataclasses
import json
import math

import pytest

from gpuplane.core.errors import InputError
from gpuplane.slicing.mig.catalog import get_mig_gpu
from gpuplane.slicing.mig.demand import demand_from_requests, parse_demand
from gpuplane.slicing.mig.enumerate import count_vector, maximal_layouts
from gpuplane.slicing.mig.layout import Instance, Layout, layout_violations
from gpuplane.slicing.mig.plan_options import class_options, make_classes
from gpuplane.slicing.mig.plan_types import (
    GpuState,
    MigPlan,
    MigPlanSettings,
    StageResult,
    make_snapshot,
)
from gpuplane.slicing.mig.planner import decide
from gpuplane.slicing.mig.profiles import MigGpu
from gpuplane.slicing.mig.serialize import plan_to_dict

A100 = get_mig_gpu("A100-80GB")
H100 = get_mig_gpu("H100-80GB")
EVICT = MigPlanSettings(allow_evict=True)
PARTED = MigPlanSettings(apply_mode="mig-parted")


def make_gpu(index: int, *items: tuple[str, int, bool]) -> GpuState:
    """GPU ``index`` with instances (profile, start, in_use)."""
    instances = tuple(sorted(Instance(s, p) for p, s, _ in items))
    in_use = frozenset(Instance(s, p) for p, s, used in items if used)
    return GpuState(index, A100, Layout(instances), in_use)


def empty(n: int, model: MigGpu = A100) -> list[GpuState]:
    return [GpuState(i, model) for i in range(n)]


def check_plan(plan: MigPlan) -> None:
    """Invariants every plan satisfies."""
    for t in plan.targets:
        model = get_mig_gpu(t.model)
        assert layout_violations(model, list(t.layout.instances)) == []
        counts = t.layout.counts()
        assert all(n <= counts[p] for p, n in t.serves)
        assert set(t.kept) <= set(t.layout.instances)
        assert t.used == (bool(t.kept) or bool(t.serves))
    assert plan.gpus_used == sum(t.used for t in plan.targets)
    assert plan.lower_bound <= plan.gpus_used
    assert all(v >= 0 for v in plan.unplaced.values())


def test_demand_packs_onto_fewest_gpus() -> None:
    snap = make_snapshot(empty(4), {"1g.10gb": 7, "3g.40gb": 2})
    plan = decide(snap)
    check_plan(plan)
    # 7 x 1g + 2 x 3g = 13 compute slices: two GPUs at least, and two suffice
    assert (plan.gpus_used, plan.lower_bound, plan.optimal) == (2, 2, True)
    assert plan.unplaced == {"1g.10gb": 0, "3g.40gb": 0}
    assert plan.placed == {"1g.10gb": 7, "3g.40gb": 2}
    assert plan.reconfigured == 2 and plan.evicted == 0
    assert [t.used for t in plan.targets] == [True, True, False, False]
    assert all(s.optimal for s in plan.stages) and plan.status == "optimal"


def test_memory_bound_not_only_compute() -> None:
    # 4 x 3g needs 16 memory slices (2 GPUs) though only 12 compute slices
    plan = decide(make_snapshot(empty(3), {"3g.40gb": 4}))
    assert plan.gpus_used == 2
    # 3 x 4g: only one 4g per GPU
    assert decide(make_snapshot(empty(3), {"4g.40gb": 3})).gpus_used == 3


def test_unplaced_when_gpus_run_out() -> None:
    plan = decide(make_snapshot(empty(2), {"7g.80gb": 3, "1g.10gb": 1}))
    check_plan(plan)
    # most instances placed first: 7g + 7g = 2 instances, or 7g + 1g = 2; either way 1 left out
    # of the 7g and one of the others
    assert sum(plan.placed.values()) == 2
    assert sum(plan.unplaced.values()) == 2
    assert plan.gpus_used == 2


def test_free_instances_are_used_without_reconfiguring() -> None:
    gpus = [make_gpu(0, ("3g.40gb", 0, False), ("3g.40gb", 4, False)), *empty(2)[1:]]
    plan = decide(make_snapshot(gpus, {"3g.40gb": 2}))
    assert plan.gpus_used == 1 and plan.reconfigured == 0
    assert plan.targets[0].serves == (("3g.40gb", 2),)


def test_in_use_instances_are_kept_without_evict() -> None:
    gpus = [
        make_gpu(0, ("3g.40gb", 0, True), ("3g.40gb", 4, False)),
        make_gpu(1, ("3g.40gb", 0, False), ("3g.40gb", 4, True)),
    ]
    plan = decide(make_snapshot(gpus, {"1g.10gb": 3}))
    check_plan(plan)
    assert plan.evicted == 0 and plan.gpus_used == 2 and plan.reconfigured == 1
    for t, gpu in zip(plan.targets, gpus, strict=True):
        assert gpu.in_use <= set(t.layout.instances)
        assert set(t.kept) == gpu.in_use


def test_evict_consolidates() -> None:
    gpus = [make_gpu(0, ("1g.10gb", 0, True)), make_gpu(1, ("1g.10gb", 3, True))]
    kept = decide(make_snapshot(gpus, {}))
    assert (kept.gpus_used, kept.evicted, kept.reconfigured) == (2, 0, 0)
    moved = decide(make_snapshot(gpus, {}), EVICT)
    check_plan(moved)
    # one pod moves next to the other: one GPU freed, one reconfigured, one pod evicted
    assert (moved.gpus_used, moved.evicted, moved.reconfigured) == (1, 1, 1)
    assert moved.unplaced == {"1g.10gb": 0}


def test_evict_is_last_resort() -> None:
    # demand fits next to the running pod: nothing is evicted even when allowed
    gpus = [make_gpu(0, ("3g.40gb", 4, True)), *empty(2)[1:]]
    plan = decide(make_snapshot(gpus, {"2g.20gb": 1, "1g.10gb": 2}), EVICT)
    assert (plan.gpus_used, plan.evicted) == (1, 0)


def test_mig_parted_mode_recreates_changed_gpus() -> None:
    gpus = [make_gpu(0, ("3g.40gb", 4, True)), *empty(2)[1:]]
    plan = decide(make_snapshot(gpus, {"3g.40gb": 1}), PARTED)
    check_plan(plan)
    # the busy GPU cannot change without losing its pod, so the new 3g goes elsewhere
    assert plan.targets[0].layout == gpus[0].layout and plan.evicted == 0
    assert plan.gpus_used == 2
    evict = decide(
        make_snapshot(gpus, {"3g.40gb": 1}),
        MigPlanSettings(apply_mode="mig-parted", allow_evict=True),
    )
    assert evict.gpus_used == 1 and evict.evicted == 1  # rebuilt GPU: its pod is evicted
    changed = [t for t in evict.targets if t.reconfigured]
    assert changed and all(t.kept == () and t.rebuilt for t in changed)
    for t in changed:  # cleared and rebuilt: every instance destroyed and created again
        assert t.destroy == t.current.instances and t.create == t.layout.instances


def test_mixed_models_share_profile_names() -> None:
    gpus = [GpuState(0, A100), GpuState(1, H100)]
    plan = decide(make_snapshot(gpus, {"7g.80gb": 2}))
    assert plan.gpus_used == 2 and plan.unplaced == {"7g.80gb": 0}
    assert {t.model for t in plan.targets} == {"A100-80GB", "H100-80GB"}


def test_deterministic() -> None:
    gpus = [
        make_gpu(i, *[(lay.instances[0].profile, lay.instances[0].start, i % 2 == 0)])
        for i, lay in enumerate(maximal_layouts(A100)[:12])
    ]
    snap = make_snapshot(gpus, {"1g.10gb": 9, "2g.20gb": 3, "3g.40gb": 2})
    assert decide(snap, EVICT) == decide(snap, EVICT)


def test_sixty_four_gpus_with_layouts_is_solved_exactly() -> None:
    layouts = maximal_layouts(A100)
    gpus = []
    for i in range(64):
        lay = layouts[(i * 37) % len(layouts)]
        busy = frozenset(lay.instances[: i % 3])
        gpus.append(GpuState(i, A100, lay, busy))
    snap = make_snapshot(gpus, {"1g.10gb": 40, "2g.20gb": 12, "3g.40gb": 10, "7g.80gb": 3})
    for settings in (MigPlanSettings(), EVICT):
        plan = decide(snap, settings)
        check_plan(plan)
        assert plan.optimal and plan.lower_bound == plan.gpus_used


def test_identical_gpus_are_one_class() -> None:
    classes = make_classes(empty(64))
    assert len(classes) == 1 and classes[0].size == 64
    options = class_options(classes[0], allow_evict=False, apply_mode="nvml")
    # idle + one reconfigure option per maximal count vector (44 for this geometry)
    assert [o.kind for o in options].count("reconfigure") == 44
    assert all(o.kind == "idle" for o in options if not o.used)


def test_in_use_options_keep_the_pods_without_evict() -> None:
    gpu = make_gpu(0, ("3g.40gb", 0, True), ("1g.10gb", 4, False))
    (cls,) = make_classes([gpu])
    for option in class_options(cls, allow_evict=False, apply_mode="nvml"):
        assert option.evicted == 0 and option.kept == count_vector(A100, Layout(tuple(gpu.in_use)))


def test_demand_parsing() -> None:
    assert parse_demand("1g.10gb=7, 3g.40gb=2", [A100]) == {"1g.10gb": 7, "3g.40gb": 2}
    assert parse_demand("1g.10gb.me=1", [A100]) == {"1g.10gb+me": 1}
    assert parse_demand("  ", [A100]) == {}
    for bad, words in [
        ("1g.5gb=1", "--demand: profile '1g.5gb'"),
        ("1g.10gb", "PROFILE=COUNT"),
        ("1g.10gb=1,1g.10gb=2", "twice"),
        ("1g.10gb=-1", "count"),
    ]:
        with pytest.raises(InputError, match=words):
            parse_demand(bad, [A100])
    requests = ["nvidia.com/mig-1g.10gb", "mig-3g.40gb", "1g.10gb"]
    assert demand_from_requests(requests, [A100]) == {"1g.10gb": 2, "3g.40gb": 1}


def test_snapshot_checks() -> None:
    with pytest.raises(InputError, match="none of the GPUs"):
        make_snapshot(empty(1), {"1g.5gb": 1})
    with pytest.raises(InputError, match="index"):
        make_snapshot([GpuState(0, A100), GpuState(0, A100)], {})
    with pytest.raises(ValueError, match="not in its layout"):
        GpuState(0, A100, Layout(), frozenset({Instance(0, "7g.80gb")}))
    assert make_snapshot(empty(1), {"1g.10gb": 0}).demand == ()


def test_time_limit_still_gives_a_valid_plan() -> None:
    layouts = maximal_layouts(A100)
    gpus = [GpuState(i, A100, layouts[(i * 11) % len(layouts)]) for i in range(48)]
    snap = make_snapshot(gpus, {"1g.10gb": 60, "2g.20gb": 20, "3g.40gb": 15})
    plan = decide(snap, MigPlanSettings(time_limit_s=1e-4, allow_evict=True))
    check_plan(plan)
    if not plan.optimal:
        assert "Time limit" in plan.status
    data = plan_to_dict(plan, [A100], snap.demand_counts())
    json.dumps(data, allow_nan=False)  # unproven bounds are null, never Infinity


def test_serialised_bound_is_null_when_unproven() -> None:
    plan = decide(make_snapshot(empty(1), {}))
    stuck = dataclasses.replace(
        plan, stages=(StageResult("gpus_used", 3, -math.inf, "Time limit reached", False),)
    )
    data = plan_to_dict(stuck, [A100], {})
    assert data["stages"][0]["bound"] is None
    json.dumps(data, allow_nan=False)
