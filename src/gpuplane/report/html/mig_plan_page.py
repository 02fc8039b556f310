"""``gpuplane mig plan --html FILE``: the MIG planner's answer as one self-contained page.

What is placed and what is not, per profile; GPUs used against the lower bound; how many GPUs
are reconfigured and instances evicted; every GPU's layout now and after, drawn over its memory
slices; the solver's stages. No script, no network, no date: same plan, same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from gpuplane.report.html.mig_svg import mig_svg
from gpuplane.report.html.page import esc, figure, page, table
from gpuplane.slicing.mig.layout import Instance
from gpuplane.slicing.mig.plan_types import GpuTarget, MigPlan
from gpuplane.slicing.mig.profiles import MigGpu

# GPUs drawn per model; beyond it the reconfigured ones first (the table lists every GPU).
MAX_DRAWN_GPUS = 64


def _instances(instances: Sequence[Instance]) -> str:
    return " + ".join(f"{i.profile}@{i.start}" for i in instances) or "-"


def _summary(plan: MigPlan, demand: Mapping[str, int], notes: Sequence[str]) -> str:
    verdict = "proven optimal" if plan.optimal else f"not proven optimal ({plan.status})"
    rows: list[tuple[object, ...]] = [
        ("GPUs", len(plan.targets)),
        ("GPUs used", plan.gpus_used),
        ("lower bound on GPUs used", plan.lower_bound),
        ("GPUs reconfigured", plan.reconfigured),
        ("instances evicted", plan.evicted),
        ("apply mode", plan.apply_mode),
        ("solve", verdict),
    ]
    body = table(("", "value"), rows)
    profiles = sorted(set(demand) | set(plan.placed) | set(plan.unplaced))
    per_profile = [
        (p, demand.get(p, 0), plan.placed.get(p, 0), plan.unplaced.get(p, 0)) for p in profiles
    ]
    body += "<h3>Demand</h3>" + table(("profile", "asked", "placed", "unplaced"), per_profile)
    left = [f"{n} x {p}" for p, n in sorted(plan.unplaced.items()) if n]
    if left:
        body += f'<p class="warn">Unplaced: {esc(", ".join(left))}.</p>'
    if notes:
        body += "<ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>"
    return body


def _drawn(targets: Sequence[GpuTarget]) -> list[GpuTarget]:
    if len(targets) <= MAX_DRAWN_GPUS:
        return list(targets)
    ranked = sorted(targets, key=lambda t: (not t.reconfigured, not t.used, t.index))
    return sorted(ranked[:MAX_DRAWN_GPUS], key=lambda t: t.index)


def _layouts(plan: MigPlan, models: Mapping[str, MigGpu]) -> str:
    parts = []
    for key in sorted({t.model for t in plan.targets}):
        model = models[key]
        mine = [t for t in plan.targets if t.model == key]
        drawn = _drawn(mine)
        rows: list[tuple[str, str]] = []
        for t in drawn:
            mark = "" if t.reconfigured else " (unchanged)"
            rows.append((f"GPU {t.index} now", t.current.describe()))
            rows.append((f"GPU {t.index} after{mark}", t.layout.describe()))
        caption = (
            f"{model.name}: {len(mine)} GPU(s), each layout now and after over the memory "
            f"slices; {sum(1 for t in mine if t.reconfigured)} reconfigured"
        )
        if len(drawn) < len(mine):
            caption += f"; {len(drawn)} drawn (reconfigured first), every GPU in the table"
        parts.append(f"<h3>{esc(model.name)}</h3>" + figure(mig_svg(model, rows), caption))
    return "".join(parts)


def _targets_table(plan: MigPlan) -> str:
    rows = [
        (
            t.index,
            t.model,
            t.current.describe(),
            t.layout.describe(),
            ", ".join(f"{n} x {p}" for p, n in t.serves) or "-",
            _instances(t.kept),
            _instances(t.evicted),
            _instances(t.create) if t.reconfigured else "-",
            _instances(t.destroy) if t.reconfigured else "-",
            ("rebuilt" if t.rebuilt else "yes") if t.reconfigured else "no",
        )
        for t in plan.targets
    ]
    head = ("GPU", "model", "now", "after", "serves", "kept", "evicted", "create", "destroy")
    return table((*head, "reconfigured"), rows)


def _stages(plan: MigPlan) -> str:
    if not plan.stages:
        return "<p>No solver stages (nothing to decide).</p>"
    rows = [
        (
            s.name,
            s.value,
            round(s.bound, 3) if math.isfinite(s.bound) else "-",
            s.status,
            "yes" if s.optimal else "no",
        )
        for s in plan.stages
    ]
    return table(("stage", "value", "bound", "status", "optimal"), rows)


def mig_plan_page(
    plan: MigPlan,
    models: Mapping[str, MigGpu],
    demand: Mapping[str, int],
    notes: Sequence[str] = (),
    title: str = "gpuplane mig plan",
) -> str:
    """The whole page; ``models`` maps each target's model name to its MIG model."""
    return page(
        title,
        (
            ("summary", "Summary", _summary(plan, demand, notes)),
            ("layouts", "Layouts now and after", _layouts(plan, models)),
            ("gpus", "Per GPU", _targets_table(plan)),
            ("solver", "Solver stages", _stages(plan)),
        ),
    )
