"""JSON forms of MIG values, as the CLI prints them (stable keys, plain types)."""

from __future__ import annotations

import math
from typing import Any

from gpuplane.slicing.mig.auto_place import INFERRED
from gpuplane.slicing.mig.enumerate import all_layouts, is_maximal, maximal_layouts
from gpuplane.slicing.mig.layout import Instance, Layout
from gpuplane.slicing.mig.parted_check import EntryCheck
from gpuplane.slicing.mig.plan_types import GpuTarget, MigPlan
from gpuplane.slicing.mig.profiles import MigGpu
from gpuplane.slicing.mig.strategy import PluginView


def verification(gpu: MigGpu) -> dict[str, Any]:
    """``verified`` and, when false, why (carried from the fact sheet)."""
    out: dict[str, Any] = {"verified": gpu.placements_verified}
    if not gpu.placements_verified:
        out["unverified_note"] = f"{gpu.name} placements: {gpu.placements_note}"
    return out


def profiles_to_dict(gpu: MigGpu) -> dict[str, Any]:
    return {
        "gpu": gpu.name,
        "key": gpu.key,
        "products": list(gpu.products),
        "pci_device_ids": [f"0x{i:04X}" for i in gpu.pci_device_ids],
        "source": gpu.source,
        **verification(gpu),
        "profiles": [
            {
                "name": p.name,
                "id": p.profile_id,
                "compute_slices": p.compute_slices,
                "memory_slices": p.memory_slices,
                "starts": list(p.starts),
                "max_instances": p.max_instances,
                "memory_gib": p.memory_gib,
                "sm_count": p.sm_count,
                "copy_engines": p.copy_engines,
                "media": p.media,
                "media_extensions": p.media_extensions,
                "resource": p.resource_name,
                "verified": p.verified,
            }
            for p in gpu.profiles
        ],
        "notes": list(gpu.notes),
    }


def layout_usage(gpu: MigGpu, layout: Layout) -> tuple[int, int]:
    """(compute slices, memory slices) a layout uses."""
    profiles = [gpu.profile(i.profile) for i in layout.instances]
    return sum(p.compute_slices for p in profiles), sum(p.memory_slices for p in profiles)


def layouts_to_dict(gpu: MigGpu, *, maximal_only: bool) -> dict[str, Any]:
    chosen = maximal_layouts(gpu) if maximal_only else all_layouts(gpu)
    rows = []
    for layout in chosen:
        compute, memory = layout_usage(gpu, layout)
        rows.append(
            {
                "instances": layout.to_list(),
                "compute_slices": compute,
                "memory_slices": memory,
                "maximal": is_maximal(gpu, layout),
            }
        )
    return {
        "gpu": gpu.name,
        **verification(gpu),
        "count": len(rows),
        "total_layouts": len(all_layouts(gpu)),
        "maximal_layouts": len(maximal_layouts(gpu)),
        "maximal_only": maximal_only,
        "layouts": rows,
    }


def _instances(items: tuple[Instance, ...]) -> list[dict[str, object]]:
    return [i.to_dict() for i in items]


def target_to_dict(t: GpuTarget) -> dict[str, Any]:
    kept = set(t.kept)
    counts = t.layout.counts()
    return {
        "gpu": t.index,
        "model": t.model,
        "instances": [{**i.to_dict(), "in_use": i in kept} for i in t.layout.instances],
        "current": t.current.to_list(),
        "used": t.used,
        "reconfigured": t.reconfigured,
        "rebuilt": t.rebuilt,
        "serves": dict(t.serves),
        "kept": _instances(t.kept),
        "evicted": _instances(t.evicted),
        "create": _instances(t.create),
        "destroy": _instances(t.destroy),
        "mig_devices": dict(sorted(counts.items())),
    }


def plan_to_dict(plan: MigPlan, models: list[MigGpu], demand: dict[str, int]) -> dict[str, Any]:
    notes = [
        f"{m.name} placements: {m.placements_note}" for m in models if not m.placements_verified
    ]
    if plan.apply_mode == "mig-parted":
        notes.append(f"mig-parted mode: {INFERRED}")
    return {
        "gpus_used": plan.gpus_used,
        "lower_bound": plan.lower_bound,
        "optimal": plan.optimal,
        "status": plan.status,
        "reconfigured": plan.reconfigured,
        "evicted": plan.evicted,
        "demand": dict(sorted(demand.items())),
        "placed": dict(sorted(plan.placed.items())),
        "unplaced": dict(sorted(plan.unplaced.items())),
        "apply_mode": plan.apply_mode,
        "verified": all(m.placements_verified for m in models),
        "notes": notes,
        "stages": [
            {
                "name": s.name,
                "value": s.value,
                "bound": s.bound if math.isfinite(s.bound) else None,  # JSON has no Infinity
                "status": s.status,
                "optimal": s.optimal,
            }
            for s in plan.stages
        ],
        "layouts": [target_to_dict(t) for t in plan.targets],
    }


def checks_to_dict(source: str, checks: list[EntryCheck]) -> dict[str, Any]:
    return {
        "file": source,
        "valid": all(c.ok for c in checks),
        "entries": [
            {
                "config": c.config,
                "entry": c.entry,
                "line": c.line,
                "model": c.model,
                "ok": c.ok,
                "gpu_instances": dict(c.gi_counts),
                "layout": c.layout.to_list() if c.layout is not None else None,
                "problems": list(c.problems),
                "notes": list(c.notes),
            }
            for c in checks
        ],
    }


def plugin_view_to_dict(view: PluginView) -> dict[str, Any]:
    return {
        "strategy": view.strategy.value,
        "error": view.error,
        "resources": view.resources(),
        "devices": [
            {
                "resource": d.resource,
                "gpu": d.gpu,
                "instance": d.instance.to_dict() if d.instance is not None else None,
            }
            for d in view.devices
        ],
        "labels": view.labels,
        "unknown_labels": list(view.unknown_labels),
    }
