"""Every valid MIG layout of a GPU model, and the instance counts they can hold.

A layout is built memory slice by memory slice, from slice 0 to 7: each slice is either left
free or becomes the start of an instance of a profile allowed to start there (largest profile
first). Every layout is produced exactly once, in a fixed order (7g first, the empty layout last),
so results are deterministic. A100/H100-class GPUs have a few thousand layouts, computed once per
model and cached.

A *count vector* is the number of instances of each profile (in ``MigGpu.profiles`` order). What a
planner needs from a GPU is mostly its count vector; which starts realise it only matters for
instances that already exist.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from gpuplane.slicing.mig.layout import Instance, Layout
from gpuplane.slicing.mig.profiles import NUM_COMPUTE_SLICES, NUM_MEMORY_SLICES, MigGpu

CountVector = tuple[int, ...]


def _walk(gpu: MigGpu) -> Iterator[tuple[Instance, ...]]:
    profiles = gpu.profiles
    counts = [0] * len(profiles)
    placed: list[Instance] = []

    def step(slice_: int, compute: int, media: int) -> Iterator[tuple[Instance, ...]]:
        if slice_ >= NUM_MEMORY_SLICES:
            yield tuple(placed)
            return
        for k, p in enumerate(profiles):
            if slice_ not in p.starts or counts[k] >= p.max_instances:
                continue
            if compute + p.compute_slices > NUM_COMPUTE_SLICES:
                continue
            if p.media_extensions and media:
                continue
            counts[k] += 1
            placed.append(Instance(slice_, p.name))
            yield from step(
                slice_ + p.memory_slices, compute + p.compute_slices, media + p.media_extensions
            )
            placed.pop()
            counts[k] -= 1
        yield from step(slice_ + 1, compute, media)

    yield from step(0, 0, 0)


@lru_cache(maxsize=32)
def all_layouts(gpu: MigGpu) -> tuple[Layout, ...]:
    """Every valid layout of ``gpu``, full or partial, including the empty one (MIG enabled,
    no instances), in the module's fixed order."""
    return tuple(Layout(instances) for instances in _walk(gpu))


def count_vector(gpu: MigGpu, layout: Layout) -> CountVector:
    counts = layout.counts()
    return tuple(counts[p.name] for p in gpu.profiles)


def counts_to_vector(gpu: MigGpu, counts: dict[str, int]) -> CountVector:
    """A ``{profile: count}`` mapping as a count vector (profile names are checked)."""
    vector = [0] * len(gpu.profiles)
    for name, n in counts.items():
        vector[gpu.profile_index(name)] += n
    return tuple(vector)


def vector_to_counts(gpu: MigGpu, vector: CountVector) -> dict[str, int]:
    return {p.name: n for p, n in zip(gpu.profiles, vector, strict=True) if n}


def _used(gpu: MigGpu, layout: Layout) -> tuple[int, int, int]:
    """(memory mask, compute slices, +me instances) of ``layout``."""
    mask = compute = media = 0
    for inst in layout.instances:
        p = gpu.profile(inst.profile)
        mask |= p.mask(inst.start)
        compute += p.compute_slices
        media += p.media_extensions
    return mask, compute, media


def can_add(gpu: MigGpu, layout: Layout) -> list[Instance]:
    """Every instance that could be added to ``layout`` keeping it valid."""
    mask, compute, media = _used(gpu, layout)
    counts = layout.counts()
    out: list[Instance] = []
    for p in gpu.profiles:
        if counts[p.name] >= p.max_instances or compute + p.compute_slices > NUM_COMPUTE_SLICES:
            continue
        if p.media_extensions and media:
            continue
        out.extend(Instance(s, p.name) for s in p.starts if not mask & p.mask(s))
    return out


def is_maximal(gpu: MigGpu, layout: Layout) -> bool:
    """No instance of any profile can be added (the GPU is as full as this layout allows)."""
    return not can_add(gpu, layout)


@lru_cache(maxsize=32)
def maximal_layouts(gpu: MigGpu) -> tuple[Layout, ...]:
    return tuple(layout for layout in all_layouts(gpu) if is_maximal(gpu, layout))


@lru_cache(maxsize=32)
def layouts_by_vector(gpu: MigGpu) -> dict[CountVector, tuple[Layout, ...]]:
    """Every layout grouped by its count vector (each group in the module's fixed order)."""
    groups: dict[CountVector, list[Layout]] = {}
    for layout in all_layouts(gpu):
        groups.setdefault(count_vector(gpu, layout), []).append(layout)
    return {v: tuple(ls) for v, ls in groups.items()}


def placeable(gpu: MigGpu, vector: CountVector) -> bool:
    """Whether some valid layout holds exactly these instance counts."""
    return vector in layouts_by_vector(gpu)


def dominates(a: CountVector, b: CountVector) -> bool:
    """``a`` holds at least as many instances of every profile as ``b``."""
    return all(x >= y for x, y in zip(a, b, strict=True))


def pareto_maximal(vectors: list[CountVector]) -> list[CountVector]:
    """The vectors no other vector dominates (duplicates removed), sorted descending."""
    if not vectors:
        return []
    return pareto_rows(np.array(vectors, dtype=np.int64))


def pareto_rows(rows: npt.NDArray[np.int64]) -> list[CountVector]:
    """:func:`pareto_maximal` of the rows of a 2-D array, compared all pairs at once: the planner
    runs it once per class of GPUs over up to a few hundred rows, where the pairwise Python
    loop of :func:`pareto_maximal_reference` took most of the planning time."""
    if rows.shape[0] == 0:
        return []
    unique = _unique_rows(rows)
    # covers[w, v]: row w is at least row v everywhere; rows are distinct, so off the diagonal
    # that is strict dominance.
    covers: npt.NDArray[np.bool_] = np.all(unique[:, None, :] >= unique[None, :, :], axis=2)
    np.fill_diagonal(covers, False)
    maximal = unique[~covers.any(axis=0)]
    return sorted((tuple(row) for row in maximal.tolist()), reverse=True)


def _unique_rows(rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Distinct rows. Small non-negative counts are packed into one integer per row (digits of
    base max + 1), which numpy deduplicates far faster than rows compared column by column."""
    low, high = int(rows.min()), int(rows.max())
    base, width = high + 1, rows.shape[1]
    if low < 0 or base**width >= 2**62:
        return np.unique(rows, axis=0)
    keys = rows @ (base ** np.arange(width - 1, -1, -1, dtype=np.int64))
    _, first = np.unique(keys, return_index=True)
    return rows[first]


def pareto_maximal_reference(vectors: list[CountVector]) -> list[CountVector]:
    """The plain definition of :func:`pareto_maximal` (tests check the two agree)."""
    unique = sorted(set(vectors), reverse=True)
    return [v for v in unique if not any(w != v and dominates(w, v) for w in unique)]


@lru_cache(maxsize=32)
def maximal_vectors(gpu: MigGpu) -> tuple[CountVector, ...]:
    """Count vectors not dominated by another placeable one: every placeable vector is at most
    one of these, so a planner free to re-partition a GPU only needs to consider them."""
    return tuple(pareto_maximal(list(layouts_by_vector(gpu))))
