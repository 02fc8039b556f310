"""A MIG layout: the GPU instances on one GPU, and the rules a layout must follow.

Rules (each one of ``profiles.json``'s ``rules``, checked separately so an error names the one
broken):

- ``unknown-profile``: the profile exists on this GPU model.
- ``invalid-start``: the instance starts where ``nvidia-smi mig -lgipp`` allows; this is what
  keeps a plain 1g off memory slice 7 and a 2g off slice 6.
- ``memory-overlap``: two instances never share a memory slice.
- ``compute-slices``: the instances use at most 7 compute slices (a 3g takes 4 memory slices but
  only 3 compute slices, which is why 3g + 3g fills a GPU).
- ``max-instances``: no more instances of a profile than the profile allows.
- ``one-media-extension``: at most one ``+me`` instance per GPU.
- ``driver-4g-3g``: only when a driver version is given: 4g + 3g on one GPU needs R510 or later.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gpuplane.core.errors import InputError, Location
from gpuplane.slicing.mig.profiles import NUM_COMPUTE_SLICES, MigGpu

RULES = (
    "unknown-profile",
    "invalid-start",
    "memory-overlap",
    "compute-slices",
    "max-instances",
    "one-media-extension",
    "driver-4g-3g",
)
MIN_DRIVER_4G_3G = 510


@dataclass(frozen=True, slots=True, order=True)
class Instance:
    """One GPU instance: a profile placed at a start (first memory slice, as -lgipp reports)."""

    start: int
    profile: str

    def to_dict(self) -> dict[str, object]:
        return {"profile": self.profile, "start": self.start}


@dataclass(frozen=True, slots=True)
class Layout:
    """The instances on one GPU, sorted by start. Build with :func:`make_layout` to check it."""

    instances: tuple[Instance, ...] = ()

    def __post_init__(self) -> None:
        if list(self.instances) != sorted(self.instances):
            raise ValueError("Layout instances must be sorted; use make_layout()")

    @property
    def is_empty(self) -> bool:
        return not self.instances

    def counts(self) -> Counter[str]:
        return Counter(i.profile for i in self.instances)

    def __contains__(self, item: object) -> bool:
        return item in self.instances

    def __len__(self) -> int:
        return len(self.instances)

    def describe(self) -> str:
        """``3g.40gb@4 + 2g.20gb@0`` (empty: ``(no instances)``)."""
        if not self.instances:
            return "(no instances)"
        return " + ".join(f"{i.profile}@{i.start}" for i in self.instances)

    def to_list(self) -> list[dict[str, object]]:
        return [i.to_dict() for i in self.instances]


EMPTY_LAYOUT = Layout()


@dataclass(frozen=True, slots=True)
class Violation:
    rule: str
    message: str
    instance: int | None = None  # index into the instances as given, when one is to blame


def _instance_violations(gpu: MigGpu, instances: Sequence[Instance]) -> list[Violation]:
    out: list[Violation] = []
    owner: dict[int, int] = {}
    for i, inst in enumerate(instances):
        profile = gpu.find_profile(inst.profile)
        if profile is None:
            out.append(
                Violation(
                    "unknown-profile",
                    f"profile {inst.profile!r} does not exist on {gpu.name} "
                    f"(valid: {', '.join(gpu.profile_names)})",
                    i,
                )
            )
            continue
        if inst.start not in profile.starts:
            out.append(
                Violation(
                    "invalid-start",
                    f"{profile.name} cannot start at memory slice {inst.start} "
                    f"(valid starts: {', '.join(map(str, profile.starts))})",
                    i,
                )
            )
            continue
        for s in profile.slices(inst.start):
            if s in owner:
                other = instances[owner[s]]
                out.append(
                    Violation(
                        "memory-overlap",
                        f"{profile.name}@{inst.start} and {other.profile}@{other.start} "
                        f"both use memory slice {s}",
                        i,
                    )
                )
                break
            owner[s] = i
    return out


def layout_violations(
    gpu: MigGpu, instances: Sequence[Instance], *, driver_major: int | None = None
) -> list[Violation]:
    """Every rule ``instances`` break on ``gpu`` (empty when the layout is valid)."""
    out = _instance_violations(gpu, instances)
    known = [(gpu.find_profile(i.profile), i) for i in instances]
    profiles = [p for p, _ in known if p is not None]
    compute = sum(p.compute_slices for p in profiles)
    if compute > NUM_COMPUTE_SLICES:
        out.append(
            Violation(
                "compute-slices",
                f"the instances use {compute} compute slices; a GPU has {NUM_COMPUTE_SLICES}",
            )
        )
    counts = Counter(p.name for p in profiles)
    for p in gpu.profiles:
        if counts[p.name] > p.max_instances:
            out.append(
                Violation(
                    "max-instances",
                    f"{counts[p.name]} instances of {p.name}; at most {p.max_instances}",
                )
            )
    media = sum(1 for p in profiles if p.media_extensions)
    if media > 1:
        out.append(Violation("one-media-extension", f"{media} +me instances; at most one per GPU"))
    sizes = {p.compute_slices for p in profiles}
    if driver_major is not None and driver_major < MIN_DRIVER_4G_3G and {3, 4} <= sizes:
        out.append(
            Violation(
                "driver-4g-3g",
                f"a 4g and a 3g instance together need driver R{MIN_DRIVER_4G_3G} or later "
                f"(driver {driver_major})",
            )
        )
    return out


def make_layout(
    gpu: MigGpu,
    instances: Iterable[Instance],
    *,
    driver_major: int | None = None,
    location: Location | None = None,
) -> Layout:
    """A checked layout; the first broken rule is an InputError (field ``...instances[i]``)."""
    given = list(instances)
    canonical = [
        Instance(i.start, p.name if (p := gpu.find_profile(i.profile)) else i.profile)
        for i in given
    ]
    problems = layout_violations(gpu, canonical, driver_major=driver_major)
    if problems:
        first = problems[0]
        loc = location or Location()
        if first.instance is not None:
            field = f"{loc.field}[{first.instance}]" if loc.field else f"[{first.instance}]"
            loc = Location(loc.source, loc.line, field)
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise InputError(
            f"invalid MIG layout on {gpu.name}: {first.message}{more}",
            expected=f"a layout that follows the {first.rule} rule",
            location=loc,
        )
    return Layout(tuple(sorted(canonical)))


def is_valid_layout(gpu: MigGpu, instances: Sequence[Instance]) -> bool:
    return not layout_violations(gpu, instances)
