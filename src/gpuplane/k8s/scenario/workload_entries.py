"""The scenario's ``workloads`` -> ``gpuplane.twin.scenario.spec.Workload`` values.

Each entry holds one manifest inline or a ``path:`` to a file of ``---``-separated manifests; every
document becomes a workload with the entry's arrival and run-time models. A workload is named by
the entry's ``name``, else ``kind/name`` as kubectl writes it (``job/finetune``); the documents
of a multi-document file are ``<entry name>/kind/name``. Run-time defaults:
Deployments and ReplicaSets run until the end (servers); Jobs and Pods must say how long their
pods run (a trace's duration column counts), because no default would be right for both a
minute-long batch job and a week-long training run; a PodGroup creates no pods of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import is_file
from gpuplane.fit import workload_objects as wo
from gpuplane.fit.workload_objects import POD_GROUP_LABEL
from gpuplane.k8s.field_errors import LineOf, fail, relocate
from gpuplane.k8s.manifests.parse import ParsedManifest, load_manifest, render_warnings
from gpuplane.k8s.scenario.files import read_text, resolve_relative
from gpuplane.k8s.scenario.priority import check_priority_class
from gpuplane.k8s.scenario.problems import Problems
from gpuplane.k8s.scenario.traces import load_trace
from gpuplane.k8s.yaml_documents import read_documents
from gpuplane.twin.scenario import spec as tw
from gpuplane.twin.scenario.schema import Scenario, WorkloadEntry

RUN_TIME_EXPECTED = "duration: {fixed: 2h}, {exponential: {mean: 30m}} or {until_end: true}"
_SERVERS = ("Deployment", "ReplicaSet")


@dataclass(frozen=True, slots=True)
class _Document:
    data: Any
    source: str
    line_of: LineOf
    prefix: str
    line: int | None


def _documents(entry: WorkloadEntry, i: int, scenario: Path, line_of: LineOf) -> list[_Document]:
    where = f"workloads[{i}]"
    if entry.manifest is not None:
        prefix = f"{where}.manifest"
        return [_Document(entry.manifest, str(scenario), line_of, prefix, line_of(prefix))]
    assert entry.path is not None
    file = resolve_relative(entry.path, scenario)
    text = read_text(file, "a manifest file", str(scenario), line_of, f"{where}.path")
    docs = read_documents(text, str(file))
    if not docs:
        raise InputError(
            f"{file} holds no manifest",
            expected="one or more Kubernetes objects separated by ---",
            location=Location(str(scenario), line_of(f"{where}.path"), f"{where}.path"),
        )
    return [_Document(d.data, str(file), d.line_of, "", d.line_of("")) for d in docs]


def _arrival(entry: WorkloadEntry, i: int, scenario: Path, line_of: LineOf) -> tw.Arrival:
    arrival = entry.arrival
    if arrival.poisson is not None:
        p = arrival.poisson
        rate = p.rate_per_s if p.rate_per_s is not None else 1.0 / float(p.mean_interarrival or 1)
        return tw.ArrivePoisson(rate_per_s=rate, count=p.count, start_s=p.start)
    if arrival.trace is not None:
        field = f"workloads[{i}].arrival.trace.path"
        file = resolve_relative(arrival.trace.path, scenario)
        if not is_file(file):
            raise InputError(
                f"{file} not found",
                expected="a CSV trace file, relative to the scenario",
                location=Location(str(scenario), line_of(field), field),
            )
        return load_trace(arrival.trace, file)
    return tw.ArriveAt(t_s=arrival.at or 0.0)


def _run_time(
    entry: WorkloadEntry, kind: str, arrival: tw.Arrival, i: int, many: bool
) -> tw.Duration:
    where = f"workloads[{i}]"
    run_time = entry.duration
    if kind == "PodGroup":
        # Beside the Job it gates, a PodGroup simply ignores the file's run time.
        if run_time is not None and not many:
            raise fail("a PodGroup has no pods of its own", f"{where}.duration", "no duration")
        return tw.UntilEnd()
    if run_time is None:
        traced = isinstance(arrival, tw.ArriveFromTrace) and all(
            row.duration_s is not None for row in arrival.rows
        )
        if kind in _SERVERS or traced:
            return tw.UntilEnd()
        raise fail(f"a {kind}'s pods need a run time", where, RUN_TIME_EXPECTED)
    if run_time.fixed is not None:
        return tw.FixedDuration(seconds=run_time.fixed)
    if run_time.exponential is not None:
        return tw.ExponentialDuration(mean_s=run_time.exponential.mean)
    return tw.UntilEnd()


def _cross_checks(workloads: list[tw.Workload], scheduler_name: str) -> list[str]:
    """Mistakes that make pods wait forever: another scheduler, a missing PodGroup."""
    groups = {
        (w.obj.namespace, w.obj.name) for w in workloads if isinstance(w.obj, wo.PodGroupSpec)
    }
    out: list[str] = []
    for w in workloads:
        if isinstance(w.obj, wo.PodGroupSpec):
            continue
        template = w.obj.template
        if template.scheduler_name != scheduler_name:
            out.append(
                f"{w.source}: {w.name}: schedulerName {template.scheduler_name!r} is not the "
                f"twin's scheduler {scheduler_name!r}; its pods stay Pending"
            )
        group = template.labels.get(POD_GROUP_LABEL)
        if group is not None and (w.obj.namespace, group) not in groups:
            out.append(
                f"{w.source}: {w.name}: no workload creates PodGroup {group!r} in namespace "
                f"{w.obj.namespace!r}; coscheduling keeps its pods Pending"
            )
    return out


def _check_not_created_twice(
    parsed: ParsedManifest, created: dict[tuple[str, str, str], str], entry: str
) -> None:
    """A Deployment, ReplicaSet or PodGroup is one object: a second create of the same
    namespace/name is refused by the API server (AlreadyExists), so the twin refuses it too.
    Pods and Jobs with several arrivals get generated names, so they may repeat."""
    if parsed.kind not in (*_SERVERS, "PodGroup"):
        return
    key = (parsed.kind, parsed.obj.namespace, parsed.obj.name)
    if key in created:
        raise fail(
            f"{parsed.kind.lower()}s {parsed.obj.name!r} already exists in namespace "
            f"{parsed.obj.namespace!r} (created by {created[key]})",
            "metadata.name",
            "one workload per object: a distinct metadata.name or namespace",
        )
    created[key] = entry


def _name(entry: WorkloadEntry, parsed: ParsedManifest, many: bool) -> str:
    """The entry's name, else kubectl's ``kind/name`` (prefixed by it in a multi-object file)."""
    ref = f"{parsed.kind.lower()}/{parsed.obj.name}"
    if entry.name is None:
        return ref
    return f"{entry.name}/{ref}" if many else entry.name


@dataclass(slots=True)
class _Seen:
    """What earlier entries named and created (names and objects must be unique)."""

    names: dict[str, int]
    objects: dict[tuple[str, str, str], str]


def _entry_workloads(
    scenario: Scenario, i: int, scenario_path: Path, line_of: LineOf, seen: _Seen
) -> tuple[list[tw.Workload], list[str]]:
    """The workloads of ``workloads[i]`` and their warnings."""
    entry = scenario.workloads[i]
    source = str(scenario_path)
    workloads: list[tw.Workload] = []
    warnings: list[str] = []
    docs = _documents(entry, i, scenario_path, line_of)
    try:
        arrival = _arrival(entry, i, scenario_path, line_of)
    except InputError as err:
        raise relocate(err, source, line_of) from None
    for doc in docs:
        parsed = load_manifest(doc.data, source=doc.source, line_of=doc.line_of, prefix=doc.prefix)
        warnings.extend(
            render_warnings(parsed, source=doc.source, line_of=doc.line_of, prefix=doc.prefix)
        )
        try:
            check_priority_class(parsed.obj, scenario.priority_classes)
            _check_not_created_twice(parsed, seen.objects, f"workloads[{i}]")
        except InputError as err:
            raise relocate(err, doc.source, doc.line_of, doc.prefix) from None
        try:
            run_time = _run_time(entry, parsed.kind, arrival, i, len(docs) > 1)
        except InputError as err:
            raise relocate(err, source, line_of) from None
        name = _name(entry, parsed, len(docs) > 1)
        if name in seen.names:
            raise relocate(
                fail(
                    f"workload name {name!r} is used twice (also by workloads[{seen.names[name]}])",
                    f"workloads[{i}]",
                    "a distinct name: on one of the entries",
                ),
                source,
                line_of,
            )
        seen.names[name] = i
        workloads.append(
            tw.Workload(
                name=name,
                obj=parsed.obj,
                arrival=arrival,
                duration=run_time,
                failure_probability=entry.failure_probability,
                source=f"{doc.source}:{doc.line}" if doc.line else doc.source,
            )
        )
    return workloads, warnings


def workload_specs(
    scenario: Scenario, scenario_path: Path, line_of: LineOf, problems: Problems | None = None
) -> tuple[tuple[tw.Workload, ...], tuple[str, ...]]:
    """Every workload of the scenario and the warnings about them. With ``problems``, an entry's
    mistake is recorded there and the next entries are still read."""
    problems = problems or Problems()
    workloads: list[tw.Workload] = []
    warnings: list[str] = []
    seen = _Seen({}, {})
    for i in range(len(scenario.workloads)):
        found, _ = problems.step(
            partial(_entry_workloads, scenario, i, scenario_path, line_of, seen)
        )
        if found is not None:
            workloads.extend(found[0])
            warnings.extend(found[1])
    warnings.extend(_cross_checks(workloads, scenario.control_plane.scheduler_name))
    return tuple(workloads), tuple(warnings)
