"""The choices the planner has for a group of identical GPUs, with dominated ones removed.

GPUs with the same model, current layout and in-use instances are interchangeable, so they form
one class and the solver decides *how many* of them take each option (one integer variable per
option), not which. A class of one GPU is the per-GPU case.

Options of a class (current layout C, in-use instances U):

- ``keep``: stay at C; its instances can serve demand; the pods on U stay (used).
- ``idle``: stay at C and serve nothing (only when nothing on it is in use).
- ``drain``: stay at C, evict every pod on U, serve nothing (needs ``allow_evict``).
- ``reconfigure``: move to another layout T, described by what matters to the objective: the
  instance counts of T (supply) and the counts of in-use instances T keeps in place.

A reconfigure option is dropped when another offers at least as much of every profile and keeps
at least as many in-use instances of every profile (a layout is always a subset of a maximal
one, so only the Pareto-maximal pairs matter), or when ``keep`` already does so without a
reconfiguration. In ``mig-parted`` mode a reconfigured GPU is cleared and rebuilt, so it keeps
nothing in place, and only counts mig-parted can actually build are offered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
import numpy.typing as npt

from gpuplane.slicing.mig.auto_place import apply_counts
from gpuplane.slicing.mig.enumerate import (
    CountVector,
    all_layouts,
    count_vector,
    dominates,
    layouts_by_vector,
    pareto_maximal,
    pareto_maximal_reference,
    pareto_rows,
    vector_to_counts,
)
from gpuplane.slicing.mig.layout import Instance, Layout
from gpuplane.slicing.mig.plan_types import GpuState
from gpuplane.slicing.mig.profiles import MigGpu

OptionKind = Literal["keep", "idle", "drain", "reconfigure"]


@dataclass(frozen=True, slots=True)
class GpuClass:
    model: MigGpu
    layout: Layout
    in_use: frozenset[Instance]
    members: tuple[int, ...]  # GPU indices, ascending

    @property
    def size(self) -> int:
        return len(self.members)


@dataclass(frozen=True, slots=True)
class Option:
    kind: OptionKind
    supply: CountVector  # instances per profile (model order) the GPU offers
    kept: CountVector  # in-use instances per profile kept in place
    used: bool
    reconfigured: bool
    evicted: int


def make_classes(gpus: Sequence[GpuState]) -> list[GpuClass]:
    """Group GPUs by (model, layout, in-use instances); classes ordered by their first GPU."""
    groups: dict[tuple[str, Layout, frozenset[Instance]], list[GpuState]] = {}
    for g in sorted(gpus, key=lambda g: g.index):
        groups.setdefault((g.model.key, g.layout, g.in_use), []).append(g)
    return [
        GpuClass(
            members[0].model, members[0].layout, members[0].in_use, tuple(g.index for g in members)
        )
        for members in groups.values()
    ]


def _zero(gpu: MigGpu) -> CountVector:
    return (0,) * len(gpu.profiles)


def _in_use_vector(gpu: MigGpu, instances: frozenset[Instance]) -> CountVector:
    return count_vector(gpu, Layout(tuple(sorted(instances))))


@dataclass(frozen=True, slots=True)
class _LayoutArrays:
    """Every layout of a model as arrays, so one class's options are a few array operations
    instead of a Python loop over a few thousand layouts."""

    index: dict[Layout, int]  # layout -> row
    slots: dict[Instance, int]  # every (profile, start) the model allows -> column
    member: npt.NDArray[np.int64]  # member[row, slot] = 1 when the layout holds that instance
    vectors: npt.NDArray[np.int64]  # count vector of every layout
    to_profile: npt.NDArray[np.int64]  # to_profile[slot, k] = 1 when the slot is of profile k


@lru_cache(maxsize=32)
def _layout_arrays(gpu: MigGpu) -> _LayoutArrays:
    layouts = all_layouts(gpu)
    instances = [Instance(s, p.name) for p in gpu.profiles for s in p.starts]
    slots = {inst: col for col, inst in enumerate(instances)}
    member = np.zeros((len(layouts), len(slots)), dtype=np.int64)
    for row, layout in enumerate(layouts):
        member[row, [slots[i] for i in layout.instances]] = 1
    to_profile = np.zeros((len(slots), len(gpu.profiles)), dtype=np.int64)
    for inst, col in slots.items():
        to_profile[col, gpu.profile_index(inst.profile)] = 1
    index = {layout: row for row, layout in enumerate(layouts)}
    return _LayoutArrays(index, slots, member, member @ to_profile, to_profile)


@lru_cache(maxsize=32)
def parted_vectors(gpu: MigGpu) -> tuple[CountVector, ...]:
    """Count vectors mig-parted can build (some creation order succeeds)."""
    return tuple(
        v
        for v in layouts_by_vector(gpu)
        if apply_counts(gpu, vector_to_counts(gpu, v)).layout is not None
    )


def _nvml_pairs(cls: GpuClass, allow_evict: bool) -> list[tuple[CountVector, CountVector]]:
    """Pareto-maximal (supply, kept) pairs over every layout other than the current one; without
    ``allow_evict`` only layouts holding every in-use instance count. (With nothing in use the
    kept half is all zeros, which leaves the supply vectors' order and dominance unchanged.)"""
    arrays, n = _layout_arrays(cls.model), len(cls.model.profiles)
    rows = np.ones(arrays.member.shape[0], dtype=bool)
    current = arrays.index.get(cls.layout)
    if current is not None:
        rows[current] = False
    in_use = np.zeros(arrays.member.shape[1], dtype=np.int64)
    # An instance no valid layout holds (never the case for a checked layout) is never kept.
    in_use[[arrays.slots[i] for i in cls.in_use if i in arrays.slots]] = 1
    if not allow_evict:
        rows &= arrays.member @ in_use == len(cls.in_use)
    kept = (arrays.member[rows] * in_use) @ arrays.to_profile
    combined = np.hstack([arrays.vectors[rows], kept])
    return [(c[:n], c[n:]) for c in pareto_rows(combined)]


def _nvml_pairs_reference(
    cls: GpuClass, allow_evict: bool
) -> list[tuple[CountVector, CountVector]]:
    """:func:`_nvml_pairs` as a loop over layouts (tests check the two agree)."""
    gpu, n = cls.model, len(cls.model.profiles)
    if not cls.in_use:
        zero = _zero(gpu)
        pairs = {
            (v, zero)
            for v, group in layouts_by_vector(gpu).items()
            if any(t != cls.layout for t in group)
        }
        return [(v, zero) for v in pareto_maximal_reference([v for v, _ in pairs])]
    combined: set[tuple[int, ...]] = set()
    for layout in all_layouts(gpu):
        if layout == cls.layout:
            continue
        kept = frozenset(layout.instances) & cls.in_use
        if not allow_evict and len(kept) != len(cls.in_use):
            continue
        combined.add(count_vector(gpu, layout) + _in_use_vector(gpu, kept))
    return [(c[:n], c[n:]) for c in pareto_maximal_reference(list(combined))]


def class_options(cls: GpuClass, *, allow_evict: bool, apply_mode: str) -> list[Option]:
    """Every non-dominated option of ``cls`` (see the module docstring), in a fixed order."""
    gpu = cls.model
    zero = _zero(gpu)
    current = count_vector(gpu, cls.layout)
    in_use = _in_use_vector(gpu, cls.in_use)
    options: list[Option] = []
    if any(current):
        options.append(Option("keep", current, in_use, True, False, 0))
    if not cls.in_use:
        options.append(Option("idle", zero, zero, False, False, 0))
    elif allow_evict:
        options.append(Option("drain", zero, zero, False, False, len(cls.in_use)))
    if apply_mode == "mig-parted":
        if cls.in_use and not allow_evict:
            return options
        vectors = [v for v in parted_vectors(gpu) if v != current]
        pairs = [(v, zero) for v in pareto_maximal(vectors)]
    else:
        pairs = _nvml_pairs(cls, allow_evict)
    for supply, kept in pairs:
        if dominates(current, supply) and dominates(in_use, kept) and any(current):
            continue  # keep offers as much without a reconfiguration
        if not any(supply):
            continue
        options.append(Option("reconfigure", supply, kept, True, True, len(cls.in_use) - sum(kept)))
    return options
