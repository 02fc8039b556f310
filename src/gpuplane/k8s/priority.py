"""Pod priority from PriorityClasses, as the Priority admission plugin sets it.

A pod naming ``priorityClassName`` gets that class's value; a pod naming none gets the
globalDefault class's value, or 0. A name that matches no class is rejected at admission with
``no PriorityClass with name <x> was found``. The two system classes always exist
(``system-cluster-critical`` 2000000000, ``system-node-critical`` 2000001000).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

from gpuplane.core.errors import InputError, Location
from gpuplane.twin.scenario.schema import PriorityClassEntry
from gpuplane.twin.scenario.spec import (
    PodGroupSpec,
    PodTemplate,
    Workload,
    WorkloadObject,
)

SYSTEM_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}


def _template(
    template: PodTemplate, classes: dict[str, int], default: int, where: str
) -> PodTemplate:
    name = template.priority_class_name
    if name is None:
        return replace(template, priority=default)
    if name not in classes:
        raise InputError(
            f"no PriorityClass with name {name} was found",
            expected=f"one of {', '.join(sorted(classes))} (declare it under priority_classes)",
            location=Location(source=where, field="priorityClassName"),
        )
    return replace(template, priority=classes[name])


def _with_template(obj: WorkloadObject, template: PodTemplate) -> WorkloadObject:
    # Every kind but PodGroup carries a pod template under the same field name.
    assert not isinstance(obj, PodGroupSpec)
    return cast(WorkloadObject, replace(cast(Any, obj), template=template))


def apply_priorities(
    workloads: tuple[Workload, ...], entries: list[PriorityClassEntry]
) -> tuple[Workload, ...]:
    classes = dict(SYSTEM_CLASSES)
    classes.update({c.name: c.value for c in entries})
    default = next((c.value for c in entries if c.globalDefault), 0)
    out = []
    for w in workloads:
        obj = w.obj
        if isinstance(obj, PodGroupSpec):
            out.append(w)
            continue
        new = _template(obj.template, classes, default, w.source or w.name)
        new_obj = _with_template(obj, new)
        out.append(replace(w, obj=new_obj))
    return tuple(out)
