"""Checking a mig-parted config against the hardware, and what mig-parted would create.

For every entry of every config, and every GPU model it can apply to: each profile must exist on
the model, the counts must fit on one GPU (some valid layout holds them, found by the layout
search), and the layout is the one mig-parted's creation orderings with driver auto-placement
produce (:mod:`gpuplane.slicing.mig.auto_place`).

Which model an entry applies to: with a model given, the entry is skipped when its
``device-filter`` does not name one of the model's PCI ids; without one, the filter picks the
models, and an entry without a filter is checked against every model (it is valid when at least
one model can hold it, as NVIDIA's default file relies on: ``all-1g.10gb`` means 7 instances on
80GB parts and 4 on A100-40GB, via filters).

Compute-instance entries (``1c.3g.20gb: 3``) are accepted: mig-parted puts consecutive compute
instances of the same GI profile into the last GI it created while they fit (here: while the CI
slices add up to at most the GI's compute slices), else opens a new GI. Only GI counts matter
for the layout.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.core.errors import InputError, Location
from gpuplane.slicing.mig.auto_place import apply_counts
from gpuplane.slicing.mig.catalog import default_mig_catalog
from gpuplane.slicing.mig.enumerate import counts_to_vector, placeable
from gpuplane.slicing.mig.layout import Layout
from gpuplane.slicing.mig.parted_config import PROFILE_SYNTAX, PartedConfig, PartedEntry
from gpuplane.slicing.mig.profiles import MigGpu


@dataclass(frozen=True, slots=True)
class EntryCheck:
    """The verdict on one entry for one GPU model."""

    config: str
    entry: int
    field: str  # e.g. "mig-configs.all-balanced[2]"
    line: int | None
    model: str | None  # the model(s) checked against; None: skipped or suits no model
    gi_counts: tuple[tuple[str, int], ...]
    layout: Layout | None  # what mig-parted creates (None: MIG disabled, skipped or invalid)
    problems: tuple[str, ...]
    notes: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def gi_counts(gpu: MigGpu, entry: PartedEntry) -> tuple[dict[str, int], list[str]]:
    """GPU-instance counts an entry asks for on ``gpu``, and the problems found."""
    problems: list[str] = []
    groups: dict[str, list[int]] = {}  # GI profile -> CI widths, one per compute instance
    for name, count in entry.mig_devices:
        match = PROFILE_SYNTAX.match(name)
        if match is None:  # the reader already rejects these
            problems.append(f"malformed profile {name!r}")
            continue
        c_text, g, gb, sign, attr = match.groups()
        gi_name = f"{g}g.{gb}gb" + (f"{sign}{attr}" if sign else "")
        profile = gpu.find_profile(gi_name)
        if profile is None:
            problems.append(
                f"profile {gi_name!r} does not exist on {gpu.name} "
                f"(valid: {', '.join(gpu.profile_names)})"
            )
            continue
        width = int(c_text) if c_text else profile.compute_slices
        if not 1 <= width <= profile.compute_slices:
            problems.append(f"{name!r}: a {width}-slice compute instance cannot sit in a {g}g GI")
            continue
        groups.setdefault(profile.name, []).extend([width] * count)
    counts: dict[str, int] = {}
    for gi_name, widths in groups.items():
        room = gpu.profile(gi_name).compute_slices
        n, left = 0, 0
        for w in sorted(widths, reverse=True):  # mig-parted's flatten: widest CI first
            if w > left:
                n, left = n + 1, room
            left -= w
        if n:
            counts[gi_name] = n
    return counts, problems


def _check_on(gpu: MigGpu, entry: PartedEntry) -> tuple[dict[str, int], Layout | None, list[str]]:
    if not entry.mig_enabled:
        return {}, None, []
    counts, problems = gi_counts(gpu, entry)
    if problems:
        return counts, None, problems
    if not placeable(gpu, counts_to_vector(gpu, counts)):
        wanted = ", ".join(f"{n}x {p}" for p, n in counts.items())
        return counts, None, [f"{wanted} do not fit on one {gpu.name} (no valid layout holds them)"]
    result = apply_counts(gpu, counts)
    if result.layout is None:
        return counts, None, [f"every creation order mig-parted tries fails on {gpu.name}"]
    return counts, result.layout, []


def _targets(entry: PartedEntry, gpu: MigGpu | None) -> tuple[list[MigGpu], str | None]:
    ids = set(entry.filter_device_ids())
    if gpu is not None:
        if entry.filters and not ids & set(gpu.pci_device_ids):
            return [], f"device-filter does not name a {gpu.name}; mig-parted skips it there"
        return [gpu], None
    models = list(default_mig_catalog().gpus.values())
    if entry.filters:
        named = [m for m in models if ids & set(m.pci_device_ids)]
        if not named:
            return [], "device-filter names no MIG GPU model gpuplane knows; not checked"
        return named, None
    return models, None


def _no_model(
    entry: PartedEntry, results: list[tuple[MigGpu, dict[str, int], Layout | None, list[str]]]
) -> str:
    """Why a filter-less entry suits no model: profiles missing everywhere, or too many."""
    wanted = ", ".join(f"{n}x {p}" for p, n in entry.mig_devices)
    have = [m.name for m, _, _, problems in results if "does not exist" not in problems[0]]
    if have:
        return f"{wanted} fit on no GPU of the models that have these profiles ({', '.join(have)})"
    return f"no MIG GPU model has all of these profiles: {wanted}"


def _entry_checks(name: str, i: int, entry: PartedEntry, gpu: MigGpu | None) -> list[EntryCheck]:
    where = f"mig-configs.{name}[{i}]"
    models, skip = _targets(entry, gpu)
    if skip is not None:
        return [EntryCheck(name, i, where, entry.line, None, (), None, (), (skip,))]
    results = [(m, *_check_on(m, entry)) for m in models]
    if gpu is None and not entry.filters:
        good = [r for r in results if not r[3]]
        if good:  # a filter-less entry only has to suit some model
            models_ok = ", ".join(m.name for m, *_ in good)
            note = f"valid on {models_ok}" if len(good) < len(results) else "valid on every model"
            _, counts, layout, _ = good[0]
            return [
                EntryCheck(
                    name,
                    i,
                    where,
                    entry.mig_devices_line or entry.line,
                    models_ok,
                    tuple(counts.items()),
                    layout,
                    (),
                    (note,),
                )
            ]
        return [
            EntryCheck(
                name,
                i,
                where,
                entry.mig_devices_line,
                None,
                (),
                None,
                (_no_model(entry, results),),
                (),
            )
        ]
    return [
        EntryCheck(
            name,
            i,
            where,
            entry.mig_devices_line or entry.line,
            m.name,
            tuple(counts.items()),
            layout,
            tuple(problems),
            (),
        )
        for m, counts, layout, problems in results
    ]


def check_parted_config(config: PartedConfig, gpu: MigGpu | None = None) -> list[EntryCheck]:
    """Verdicts for every entry of every config (see the module docstring)."""
    out: list[EntryCheck] = []
    for name, entries in config.configs:
        for i, entry in enumerate(entries):
            out.extend(_entry_checks(name, i, entry, gpu))
    return out


def first_problem(config: PartedConfig, checks: list[EntryCheck]) -> InputError | None:
    """The first failed check as a located error, or None when every entry passed."""
    for check in checks:
        if check.problems:
            more = sum(len(c.problems) for c in checks) - 1
            extra = f" (and {more} more problems)" if more > 0 else ""
            return InputError(
                f"{check.problems[0]}{extra}",
                expected="profiles of the GPU model, in counts one GPU can hold",
                location=Location(config.source, check.line, f"{check.field}.mig-devices"),
            )
    return None
