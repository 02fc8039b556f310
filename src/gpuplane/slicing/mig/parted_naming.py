"""A node's MIG layouts as one named mig-parted config, and back.

NVIDIA's MIG manager applies the config a node's ``nvidia.com/mig.config`` label names, and acts
only when the label *changes*; so every distinct set of layouts gets its own name, derived from
its content: ``gpuplane-<10 hex digits of sha256>`` over the GPU model and the entries. The same
layouts on two nodes of one model share a name, and writing a config again is a no-op.

Entries: one ``devices: all`` entry when every GPU gets the same counts, else one entry per set
of GPU indices with the same counts (``devices: [0, 1]``). A GPU with no instances is MIG-enabled
with ``mig-devices: {}``. mig-parted places the counts itself (driver auto-placement), so the
layout read back is :func:`gpuplane.slicing.mig.auto_place.apply_counts` of the counts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from gpuplane.slicing.mig.auto_place import apply_counts
from gpuplane.slicing.mig.layout import EMPTY_LAYOUT, Layout
from gpuplane.slicing.mig.parted_config import (
    ALL_DEVICES,
    PartedConfig,
    PartedEntry,
    dump_parted_config,
    entry_for_gpu,
)
from gpuplane.slicing.mig.profiles import MigGpu

NAME_PREFIX = "gpuplane-"

Counts = tuple[tuple[str, int], ...]


def layout_counts(model: MigGpu, layout: Layout) -> Counts:
    """``mig-devices`` of a layout, smallest profile first (as NVIDIA's files list them)."""
    counts = layout.counts()
    return tuple((name, counts[name]) for name in reversed(model.profile_names) if counts[name])


def node_entries(model: MigGpu, layouts: Sequence[Layout]) -> tuple[PartedEntry, ...]:
    per_gpu = [layout_counts(model, layout) for layout in layouts]
    if len(set(per_gpu)) <= 1:
        return (PartedEntry(ALL_DEVICES, True, per_gpu[0] if per_gpu else ()),)
    groups: dict[Counts, list[int]] = {}
    for index, counts in enumerate(per_gpu):
        groups.setdefault(counts, []).append(index)
    return tuple(
        PartedEntry(tuple(indices), True, counts)
        for counts, indices in sorted(groups.items(), key=lambda kv: kv[1][0])
    )


def config_name(model: MigGpu, entries: tuple[PartedEntry, ...]) -> str:
    text = dump_parted_config(PartedConfig((("x", entries),)))
    digest = hashlib.sha256(f"{model.key}\n{text}".encode()).hexdigest()
    return f"{NAME_PREFIX}{digest[:10]}"


def named_node_config(
    model: MigGpu, layouts: Sequence[Layout]
) -> tuple[str, tuple[PartedEntry, ...]]:
    """The name and entries of the config that gives these layouts."""
    entries = node_entries(model, layouts)
    return config_name(model, entries), entries


def layouts_of(
    config: PartedConfig, name: str, model: MigGpu, num_gpus: int
) -> tuple[Layout, ...] | None:
    """Each GPU's layout after mig-parted applies ``name`` (None: the config is not in the file
    or mig-parted could not apply it). A GPU the config leaves alone or keeps MIG-disabled has
    no instances."""
    if name not in config.names():
        return None
    entries = config.get(name)
    pci = model.pci_device_ids[0] if model.pci_device_ids else 0
    out: list[Layout] = []
    for index in range(num_gpus):
        entry = entry_for_gpu(entries, index, pci)
        if entry is None or not entry.mig_enabled or not entry.counts():
            out.append(EMPTY_LAYOUT)
            continue
        applied = apply_counts(model, entry.counts())
        if applied.layout is None:
            return None
        out.append(applied.layout)
    return tuple(out)


def merged_config(
    base: PartedConfig, added: Sequence[tuple[str, tuple[PartedEntry, ...]]]
) -> PartedConfig:
    """``base`` with ``added`` configs appended (a name already there is replaced in place)."""
    new = dict(added)
    configs = [(name, new.pop(name, entries)) for name, entries in base.configs]
    configs.extend((name, entries) for name, entries in added if name in new)
    return PartedConfig(tuple(configs), base.version, base.source)
