"""A scenario as a sweep base: one point = one twin run of the scenario with the point's values.

Settings (under ``base: {scenario: ...}``): ``file`` (the scenario, relative to the sweep file),
``until`` (simulated time, e.g. 2h) and ``seed`` (both may be varied as knobs of the same name),
and ``set`` (field path -> value: fixed changes to the scenario for every point).
A parameter with ``path`` sets that field of the scenario file (``serving.services[0].traffic
.trace.rate_scale``, ``node_pools[h200].count``) and the scenario is checked by the scenario
loader as ``gpuplane simulate`` checks it; one with ``keda`` sets a field of a ScaledObject the
scenario loads (``spec.triggers[0].metadata.threshold``; metadata values become strings, as the
CRD's ``map[string]string`` has them) and the ScaledObject is checked again as KEDA's webhook
would. Figures are paths into the run's summary.json (``gpus.allocated_gpu_hours``,
``serving[qwen-chat].slo_attainment``, ``serving[qwen-chat].latency_s.ttft_p90_s``).

The workers re-read the files the scenario names (manifests, traces) from the same paths, so
on a Ray cluster they must see the same files (a shared folder, or the same checkout).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from gpuplane.autoscaler.keda.model import ScaledObjectIn
from gpuplane.core.duration import parse_duration_s
from gpuplane.core.errors import InputError, Location
from gpuplane.core.yamlio import LineIndex
from gpuplane.k8s.manifests.scaled_object import scaled_objects_from_text
from gpuplane.k8s.scenario.loader import LoadedScenario, read_scenario_data, scenario_from_data
from gpuplane.sweep.engine.checks import figure_at, no_knob, relocated, settings_at, with_knob
from gpuplane.sweep.engine.paths import set_path, split_path
from gpuplane.sweep.engine.point import Cell, Point, Value, format_cell
from gpuplane.sweep.engine.spec import KedaTarget, ParameterSpec
from gpuplane.twin.build import simulation_from_spec
from gpuplane.twin.summary import RunSummary

KNOBS = ("seed", "until")
GPU_HOURS = "gpus.allocated_gpu_hours"
SUMMARY_KEYS = tuple(f.name for f in dataclasses.fields(RunSummary))


class ScenarioSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str = Field(description="the scenario YAML, relative to the sweep file")
    until: str | float = Field("1h", description="simulated time per point, e.g. 2h")
    seed: int = Field(0, ge=0)
    set: dict[str, Any] = Field(
        default_factory=dict,
        description="scenario field path -> value, applied to every point (the sweep's fixed "
        "changes to the scenario: the SLO, the trace, its rate)",
    )

    @field_validator("until")
    @classmethod
    def _duration(cls, value: str | float) -> str | float:
        if parse_duration_s(value) <= 0:
            raise ValueError(f"{value!r} is not a positive duration")
        return value


@dataclass(frozen=True, slots=True)
class ScenarioBase:
    settings: ScenarioSettings
    path: Path
    data: Any
    index: LineIndex
    scaled_objects: tuple[str, ...]  # names, in the order the scenario loads them
    file_digest: str
    default_figure_paths: tuple[str, ...]
    # name -> parameter, as check_parameter saw them: what evaluate applies each value to.
    targets: dict[str, ParameterSpec] = dataclasses.field(default_factory=dict)

    kind = "scenario"

    def check_parameter(self, name: str, spec: ParameterSpec) -> None:
        where = f"parameters.{name}"
        if spec.path is not None:
            split_path(spec.path, f"{where}.path")  # where it leads: checked with each value
        elif spec.keda is not None:
            self._scaled_object_index(spec.keda, f"{where}.keda.scaled_object")
            split_path(spec.keda.path, f"{where}.keda.path")
        elif name not in KNOBS:
            targets = "path: a scenario field, keda: a ScaledObject field"
            raise no_knob("scenario", name, KNOBS, where, targets)
        self.targets[name] = spec

    def _scaled_object_index(self, target: KedaTarget, field: str) -> int:
        if target.scaled_object not in self.scaled_objects:
            raise InputError(
                f"no ScaledObject {target.scaled_object!r} in the scenario",
                expected="one of " + (", ".join(self.scaled_objects) or "(none: autoscaling)"),
                location=Location(field=field),
            )
        return self.scaled_objects.index(target.scaled_object)

    def check_value(self, name: str, spec: ParameterSpec, value: Value, field: str) -> None:
        if spec.path is None and spec.keda is None:
            with_knob(self.settings, name, value, field)
            return
        self.load(((name, value),), {name: spec}, field)

    def load(
        self, params: tuple[tuple[str, Value], ...], specs: dict[str, ParameterSpec], field: str
    ) -> LoadedScenario:
        """The scenario with ``params`` applied (path ones to the file's data, keda ones to the
        ScaledObjects), checked as the scenario loader and KEDA's webhook check them."""
        data = self.data
        for name, value in params:
            spec = specs[name]
            if spec.path is not None:
                data = set_path(data, spec.path, value, field)
        try:
            loaded = scenario_from_data(data, self.index, self.path)
        except InputError as exc:
            raise relocated(exc, field, "the scenario with these values") from None
        objects = list(loaded.spec.scaled_objects)
        for name, value in params:
            spec = specs[name]
            if spec.keda is not None:
                i = self._scaled_object_index(spec.keda, field)
                objects[i] = _set_keda(objects[i], spec.keda, value, field)
        if any(specs[n].keda is not None for n, _ in params):
            changed = dataclasses.replace(loaded.spec, scaled_objects=tuple(objects))
            loaded = dataclasses.replace(loaded, spec=changed)
        return loaded

    def default_figures(self) -> tuple[str, ...]:
        return self.default_figure_paths

    def check_figure(self, name: str, field: str) -> None:
        first = split_path(name, field)[0]
        if first not in SUMMARY_KEYS:
            raise InputError(
                f"{name!r} is not in a run's summary",
                expected="a path into summary.json, starting with one of "
                + ", ".join(SUMMARY_KEYS),
                location=Location(field=field),
            )

    def digest(self) -> str:
        text = json.dumps([self.settings.model_dump(), self.file_digest], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def evaluate(self, point: Point, figures: tuple[str, ...]) -> dict[str, Cell]:
        knobs = {**self.settings.model_dump(), **point.as_dict()}
        scenario = tuple((k, v) for k, v in point.params if k not in KNOBS)
        where = f"point {point.index}"
        loaded = self.load(scenario, self.targets, where) if scenario else self.plain()
        sim = simulation_from_spec(loaded.spec, seed=int(knobs["seed"]), keep_events=False)
        summary = sim.run(parse_duration_s(knobs["until"])).summary.as_dict()
        out: dict[str, Cell] = {}
        for i, name in enumerate(figures):
            out[name] = figure_at(summary, name, i, "the run's summary", GPU_HOURS)
        return out

    def plain(self) -> LoadedScenario:
        return scenario_from_data(self.data, self.index, self.path)


def _set_keda(so: ScaledObjectIn, target: KedaTarget, value: Value, field: str) -> ScaledObjectIn:
    """The ScaledObject with ``target.path`` set, checked again as a ScaledObject file is."""
    manifest = so.model_dump(mode="json", exclude_none=True)
    text_value: Value = value
    if "metadata" in split_path(target.path, field)[-2:-1]:
        text_value = format_cell(value)  # trigger metadata is map[string]string in the CRD
    changed = set_path(manifest, target.path, text_value, field)
    try:
        (checked,) = scaled_objects_from_text(yaml.safe_dump(changed, sort_keys=False), "")
    except InputError as exc:
        problem = f"ScaledObject {so.metadata.name} with {target.path}={format_cell(value)} is "
        problem += (
            f"refused: {exc.location.field + ': ' if exc.location.field else ''}{exc.problem}"
        )
        raise InputError(problem, expected=exc.expected, location=Location(field=field)) from None
    return checked


def _default_figures(loaded: LoadedScenario) -> tuple[str, ...]:
    figures = ["gpus.allocated_gpu_hours", "gpus.allocation_ratio"]
    if loaded.spec.serving is not None:
        for svc in loaded.spec.serving.services:
            figures += [
                f"serving[{svc.name}].slo_attainment",
                f"serving[{svc.name}].latency_s.ttft_p90_s",
                f"serving[{svc.name}].latency_s.itl_p99_s",
            ]
    return tuple(figures)


def _named_files(data: Any, folder: Path) -> list[Path]:
    """Every string in the resolved scenario that names a file beside it (manifests, traces,
    ScaledObjects), in order: their bytes go into the digest, so a changed trace is noticed."""
    found: list[Path] = []
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, str) and 0 < len(item) < 4096 and "\n" not in item:
            candidate = folder / item
            if candidate.is_file() and candidate not in found:
                found.append(candidate)
    return found


def scenario_base(settings: Any, folder: Path, where: str) -> ScenarioBase:
    """The base from its settings: the scenario read and checked once, here."""
    s = settings_at(ScenarioSettings, settings, where)
    path = (folder / s.file).resolve()
    try:
        data, index = read_scenario_data(path)
    except InputError as exc:
        raise relocated(exc, f"{where}.file", "the scenario") from None
    for key, value in s.set.items():
        data = set_path(data, key, value, f"{where}.set.{key}")
    try:
        loaded = scenario_from_data(data, index, path)
    except InputError as exc:
        field = f"{where}.set" if s.set else f"{where}.file"
        raise relocated(exc, field, "the scenario") from None
    resolved = loaded.scenario.model_dump(mode="json")
    digest = hashlib.sha256(path.read_bytes())
    digest.update(json.dumps(resolved, sort_keys=True).encode())
    for named in _named_files(resolved, path.parent):
        digest.update(named.read_bytes())
    return ScenarioBase(
        settings=s,
        path=path,
        data=data,
        index=index,
        scaled_objects=tuple(so.metadata.name for so in loaded.spec.scaled_objects),
        file_digest=digest.hexdigest(),
        default_figure_paths=_default_figures(loaded),
    )
