"""The MIG planner: ``decide(snapshot, settings) -> MigPlan``.

Pure: the same snapshot and settings give the same plan (single-threaded HiGHS, fixed seed,
every tie broken by GPU index and layout order); no clock, no globals, no I/O beyond keeping the
solver's banner off stdout.

Steps: group identical GPUs (:mod:`plan_options`), solve the lexicographic integer program
(:mod:`plan_solver`), then turn class-level counts into per-GPU targets: used options go to the
lowest GPU indices of a class, served instances are spread so each used GPU gets some, and a
reconfigured GPU gets exactly the instances it serves (no idle leftovers), placed at the starts
that keep the most in-use instances and then the most existing instances (``nvml`` mode) or
where mig-parted's auto-placement puts them (``mig-parted`` mode). The reported figures are
recomputed from the final targets.
"""

from __future__ import annotations

import heapq
from collections import Counter

from gpuplane.slicing.mig.auto_place import apply_counts
from gpuplane.slicing.mig.enumerate import count_vector, layouts_by_vector, vector_to_counts
from gpuplane.slicing.mig.layout import Instance, Layout
from gpuplane.slicing.mig.plan_options import GpuClass, Option, class_options, make_classes
from gpuplane.slicing.mig.plan_solver import ceil_bound, solve
from gpuplane.slicing.mig.plan_types import GpuTarget, MigPlan, MigPlanSettings, MigSnapshot

DEFAULT_SETTINGS = MigPlanSettings()


def _wanted(snapshot: MigSnapshot) -> dict[str, int]:
    wanted = Counter(snapshot.demand_counts())
    for g in snapshot.gpus:
        wanted.update(i.profile for i in g.in_use)
    return dict(sorted((k, v) for k, v in wanted.items() if v))


def _spread(cls: GpuClass, chosen: list[Option], served: dict[str, int]) -> list[Counter[str]]:
    """Per GPU of the class, the instances it serves: kept pods first, then the rest to the GPU
    with spare room that serves least so far (so every used GPU gets some)."""
    names = [p.name for p in cls.model.profiles]
    out = [Counter({names[k]: n for k, n in enumerate(o.kept) if n}) for o in chosen]
    totals = [c.total() for c in out]
    for name, total in served.items():
        k = names.index(name)
        left = total - sum(c[name] for c in out)
        # A heap of (served so far, GPU) over the GPUs with room for this profile: the same
        # choice as scanning for the minimum every time, in O(log n) per instance instead of
        # O(n), which matters when one class holds a thousand GPUs.
        heap = [
            (totals[i], i) for i, o in enumerate(chosen) if o.used and out[i][name] < o.supply[k]
        ]
        heapq.heapify(heap)
        for _ in range(left):
            if not heap:
                break  # cannot happen when the solver's counts are consistent
            _, best = heapq.heappop(heap)
            out[best][name] += 1
            totals[best] += 1
            if out[best][name] < chosen[best].supply[k]:
                heapq.heappush(heap, (totals[best], best))
    return out


def _nvml_layout(cls: GpuClass, wanted: Counter[str]) -> Layout:
    """The layout holding exactly ``wanted`` that keeps the most in-use, then most existing,
    instances in place (first in enumeration order on ties)."""
    vector = tuple(wanted[p.name] for p in cls.model.profiles)
    candidates = layouts_by_vector(cls.model).get(vector, ())
    current = set(cls.layout.instances)
    return max(
        candidates,
        key=lambda t: (len(cls.in_use & set(t.instances)), len(current & set(t.instances))),
        default=cls.layout,
    )


def _target(
    cls: GpuClass, index: int, option: Option, serves: Counter[str], mode: str
) -> GpuTarget:
    layout = cls.layout
    if option.kind == "reconfigure" and serves.total():
        if mode == "mig-parted":
            if tuple(serves[p.name] for p in cls.model.profiles) != count_vector(cls.model, layout):
                built = apply_counts(cls.model, dict(serves)).layout
                layout = built if built is not None else layout
        else:
            layout = _nvml_layout(cls, serves)
    reconfigured = layout != cls.layout
    if option.kind == "drain" or (reconfigured and mode == "mig-parted"):
        kept: tuple[Instance, ...] = ()
    else:
        kept = tuple(sorted(cls.in_use & set(layout.instances)))
    evicted = tuple(sorted(cls.in_use - set(kept)))
    if option.kind in ("idle", "drain"):
        serves = Counter[str]()
    return GpuTarget(
        index=index,
        model=cls.model.name,
        current=cls.layout,
        layout=layout,
        serves=tuple(sorted((k, v) for k, v in serves.items() if v)),
        kept=kept,
        evicted=evicted,
        used=bool(kept) or serves.total() > 0,
        reconfigured=reconfigured,
        rebuilt=reconfigured and mode == "mig-parted",
    )


def _class_targets(
    cls: GpuClass, options: list[Option], counts: list[int], served: dict[str, int], mode: str
) -> list[GpuTarget]:
    order = sorted(range(len(options)), key=lambda o: (not options[o].used, o))
    chosen = [options[o] for o in order for _ in range(counts[o])]
    spread = _spread(cls, chosen, served)
    return [
        _target(cls, index, option, serves, mode)
        for index, option, serves in zip(cls.members, chosen, spread, strict=True)
    ]


def decide(snapshot: MigSnapshot, settings: MigPlanSettings = DEFAULT_SETTINGS) -> MigPlan:
    """Target layouts serving the demand with the fewest GPUs used, then the fewest GPUs
    reconfigured, then the fewest pods evicted; as much demand as fits when not all of it does."""
    classes = make_classes(snapshot.gpus)
    options = [
        class_options(c, allow_evict=settings.allow_evict, apply_mode=settings.apply_mode)
        for c in classes
    ]
    wanted = _wanted(snapshot)
    solution = solve(classes, options, wanted, time_limit_s=settings.time_limit_s)
    targets: list[GpuTarget] = []
    for c, cls in enumerate(classes):
        targets.extend(
            _class_targets(
                cls, options[c], solution.counts[c], solution.served[c], settings.apply_mode
            )
        )
    targets.sort(key=lambda t: t.index)
    served = Counter[str]()
    kept = Counter[str]()
    for t in targets:
        served.update(dict(t.serves))
        kept.update(i.profile for i in t.kept)
    used = sum(t.used for t in targets)
    stages = solution.stages
    # GPUs whose pods may not move are used in every plan: a bound even when the solver proved
    # nothing in time.
    pinned = 0 if settings.allow_evict else sum(1 for g in snapshot.gpus if g.in_use)
    optimal = all(s.optimal for s in stages)
    status = (
        "optimal"
        if optimal
        else "; ".join(f"{s.name}: {s.status}" for s in stages if not s.optimal)
    )
    return MigPlan(
        targets=tuple(targets),
        gpus_used=used,
        lower_bound=min(used, max(pinned, ceil_bound(stages[1].bound))),
        reconfigured=sum(t.reconfigured for t in targets),
        evicted=sum(len(t.evicted) for t in targets),
        placed={k: served[k] - kept[k] for k in wanted},
        unplaced={k: wanted[k] - served[k] for k in wanted},
        optimal=optimal,
        status=status,
        stages=stages,
        apply_mode=settings.apply_mode,
    )


def mig_devices(target: GpuTarget, model_profiles: list[str]) -> dict[str, int]:
    """The target as mig-parted ``mig-devices`` counts (profile order of the model)."""
    counts = target.layout.counts()
    return {name: counts[name] for name in model_profiles if counts[name]}


__all__ = ["DEFAULT_SETTINGS", "decide", "mig_devices", "vector_to_counts"]
