"""Pod priority from PriorityClasses, as the Priority admission plugin sets it.

A pod naming ``priorityClassName`` gets that class's value; a pod naming none gets the
globalDefault class's value, or 0. A name that matches no class is rejected at admission with
``no PriorityClass with name <x> was found``. The two system classes always exist
(``system-cluster-critical`` 2000000000, ``system-node-critical`` 2000001000).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

from gpuplane.api.validation import dns1123_subdomain_errors, forbidden, invalid
from gpuplane.core.errors import InputError, Location
from gpuplane.fit.workload_objects import PodGroupSpec, PodSpecObject, PodTemplate, WorkloadObject
from gpuplane.k8s.field_errors import fail
from gpuplane.twin.scenario.schema import PriorityClassEntry
from gpuplane.twin.scenario.spec import Workload

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


def template_path(obj: WorkloadObject) -> str:
    """Where a kind keeps its pod spec: ``spec`` for a Pod, ``spec.template.spec`` otherwise."""
    return "spec" if isinstance(obj, PodSpecObject) else "spec.template.spec"


def check_priority_class(obj: WorkloadObject, entries: list[PriorityClassEntry]) -> None:
    """The Priority admission plugin's check, at the manifest's own field (the caller locates)."""
    if isinstance(obj, PodGroupSpec):
        return
    name = obj.template.priority_class_name
    classes = {**SYSTEM_CLASSES, **{c.name: c.value for c in entries}}
    if name is not None and name not in classes:
        raise fail(
            f"no PriorityClass with name {name} was found",
            f"{template_path(obj)}.priorityClassName",
            f"one of {', '.join(sorted(classes))} (declare it under priority_classes)",
        )


def check_priority_classes(entries: list[PriorityClassEntry]) -> None:
    """``ValidatePriorityClass`` plus the two classes the API server creates at start-up: a
    ``system-`` name is reserved, and the built-in ones already exist."""
    for i, entry in enumerate(entries):
        at = f"priority_classes[{i}].name"
        for problem in dns1123_subdomain_errors(entry.name):
            raise fail(invalid(entry.name, problem), at)
        if entry.name in SYSTEM_CLASSES:
            raise fail(
                f'priorityclasses.scheduling.k8s.io "{entry.name}" already exists',
                at,
                "a name without the system- prefix (the API server creates this class itself)",
            )
        if entry.name.startswith("system-"):
            raise fail(
                forbidden(
                    "priority class names with 'system-' prefix are reserved for system use only"
                ),
                at,
            )


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
