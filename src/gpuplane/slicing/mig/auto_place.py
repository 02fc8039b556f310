"""Where the driver puts a GPU instance when nobody says where, and how mig-parted uses that.

``nvidia-smi mig -cgi`` and NVML's ``CreateGpuInstance`` without a placement let the driver pick
the start. The driver's rule is not documented; the one modelled here reproduces every outcome
the MIG user guide shows on an A100-40GB (``profiles.json`` ``observed_auto_placements``):

- a profile one memory slice wide takes the lowest free start (``-cgi 14,19,19,19,19,19`` gives
  1g at 0, 1, 2, 3 and then 6, around the 2g at 4);
- a wider profile takes the highest free start (two 3g: 4 first, then 0; a 2g goes to 4 when
  slices 4-5 are free, else 2, else 0).

It is an inference (``INFERRED`` below says so in outputs), not NVIDIA's stated algorithm.

mig-parted (``pkg/mig/config``) never chooses starts. To apply ``{profile: count}`` it clears the
GPU, flattens the counts into a list sorted by GI size (largest first), then by CI size, with
``+me`` profiles first among equals, and creates the instances in that order with driver
auto-placement. If one creation fails it clears the GPU and tries the next distinct ordering
(its recursive swap enumeration), until one ordering succeeds or all have failed.
Go's sort is not stable and mig-parted iterates a map, so the order among equal keys (1g.10gb
and 1g.20gb both have g=1, c=1) is not fixed in the real tool; here the wider profile goes first.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from gpuplane.slicing.mig.layout import Instance, Layout
from gpuplane.slicing.mig.profiles import NUM_COMPUTE_SLICES, MigGpu, MigProfile

INFERRED = "driver auto-placement rule inferred from the MIG user guide's A100 examples"


def driver_start_order(profile: MigProfile) -> tuple[int, ...]:
    """The starts the modelled driver tries, in order."""
    if profile.memory_slices == 1:
        return profile.starts
    return tuple(reversed(profile.starts))


def auto_create(gpu: MigGpu, current: Sequence[Instance], name: str) -> Instance | None:
    """The instance the driver creates for profile ``name`` next to ``current``; None when it
    answers *Insufficient Resources*."""
    profile = gpu.profile(name)
    mask = compute = media = 0
    count = 0
    for inst in current:
        p = gpu.profile(inst.profile)
        mask |= p.mask(inst.start)
        compute += p.compute_slices
        media += p.media_extensions
        count += p.name == profile.name
    if compute + profile.compute_slices > NUM_COMPUTE_SLICES or count >= profile.max_instances:
        return None
    if profile.media_extensions and media:
        return None
    for start in driver_start_order(profile):
        if not mask & profile.mask(start):
            return Instance(start, profile.name)
    return None


def create_in_order(gpu: MigGpu, names: Sequence[str]) -> Layout | None:
    """``nvidia-smi mig -cgi a,b,c`` on an empty GPU: the layout, or None if a creation fails."""
    placed: list[Instance] = []
    for name in names:
        inst = auto_create(gpu, placed, name)
        if inst is None:
            return None
        placed.append(inst)
    return Layout(tuple(sorted(placed)))


def flatten_order(gpu: MigGpu, counts: dict[str, int]) -> list[str]:
    """mig-parted's ``MigConfig.Flatten()``: one entry per instance, largest GI first."""
    names: list[str] = []
    for name, n in counts.items():
        names.extend([gpu.profile(name).name] * n)

    def key(name: str) -> tuple[int, int, int, int, str]:
        p = gpu.profile(name)
        # GI slices, CI slices (= GI slices for GI-wide instances), "+me" first, then our
        # tie-break for what Go leaves unordered: wider memory first, then the name.
        return (-p.compute_slices, -p.compute_slices, -p.media_extensions, -p.memory_slices, name)

    return sorted(names, key=key)


def distinct_orderings(items: list[str]) -> Iterator[list[str]]:
    """Orderings in mig-parted's ``iteratePermutationsUntilSuccess`` order: position i takes
    each later item in turn (by swapping), skipping an item equal to one already tried there."""
    work = list(items)

    def iterate(i: int) -> Iterator[list[str]]:
        if i >= len(work):
            yield list(work)
            return
        for j in range(i, len(work)):
            if work[j] in work[i:j]:
                continue
            work[i], work[j] = work[j], work[i]
            yield from iterate(i + 1)
            work[i], work[j] = work[j], work[i]

    yield from iterate(0)


@dataclass(frozen=True, slots=True)
class PartedApply:
    """What ``nvidia-mig-parted apply`` would leave on one GPU for some counts."""

    layout: Layout | None  # None: "all orderings failed"
    order: tuple[str, ...]  # the creation order that worked (empty when none did)
    attempts: int  # orderings tried


def apply_counts(gpu: MigGpu, counts: dict[str, int]) -> PartedApply:
    """Simulate mig-parted applying ``counts`` to a cleared GPU (see the module docstring)."""
    attempts = 0
    for order in distinct_orderings(flatten_order(gpu, counts)):
        attempts += 1
        layout = create_in_order(gpu, order)
        if layout is not None:
            return PartedApply(layout, tuple(order), attempts)
    return PartedApply(None, (), attempts)
