"""Read a sweep file: its shape, its base, its parameters' values and figures, all checked.

Every mistake is an InputError with the sweep file, the line and the field path, including the
ones the base finds (a scenario field path that leads nowhere, a value the scenario loader
refuses: ``sweep.yaml:14: parameters.rate.values[2]: ...``).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

from gpuplane.core.errors import InputError, Location
from gpuplane.core.validation import validate_model
from gpuplane.core.yamlio import LineIndex, read_yaml_document
from gpuplane.sweep.engine.base import BaseRegistry, SweepBase
from gpuplane.sweep.engine.expand import discrete_values, expand
from gpuplane.sweep.engine.point import Point, Value
from gpuplane.sweep.engine.spec import ParameterSpec, SweepFile


@dataclass(frozen=True, slots=True)
class Sweep:
    """A checked sweep: the file, its base (loaded), its points and the figures to collect."""

    source: str
    file: SweepFile
    base: SweepBase
    points: tuple[Point, ...]
    figures: tuple[str, ...]
    # Of the sweep file's settings and the base's input: which results a restart may keep.
    digest: str

    @property
    def parameter_names(self) -> tuple[str, ...]:
        return tuple(self.file.parameters)

    @property
    def columns(self) -> tuple[str, ...]:
        return ("point", *self.parameter_names, *self.figures)


def _read(path: Path) -> tuple[object, LineIndex]:
    return read_yaml_document(path, "sweep")


def _make_base(file: SweepFile, bases: BaseRegistry, folder: Path) -> SweepBase:
    kinds = ", ".join(sorted(bases))
    if len(file.base) != 1:
        raise InputError(
            f"base has {len(file.base)} keys",
            expected=f"one key naming the base kind: one of {kinds}",
            location=Location(field="base"),
        )
    ((kind, settings),) = file.base.items()
    factory = bases.get(kind)
    if factory is None:
        raise InputError(
            f"unknown base kind {kind!r}",
            expected=f"one of {kinds}",
            location=Location(field=f"base.{kind}"),
        )
    return factory(settings, folder, f"base.{kind}")


def _values_to_check(name: str, spec: ParameterSpec) -> list[tuple[Value, str]]:
    """Each listed value with its field; for a continuous domain, its two bounds."""
    field = f"parameters.{name}"
    values = discrete_values(name, spec)
    if values is not None:
        if isinstance(spec.values, list):
            return [(v, f"{field}.values[{i}]") for i, v in enumerate(values)]
        return [(v, f"{field}.{'values' if spec.values else 'range'}") for v in values]
    for kind in ("uniform", "log_uniform", "integers"):
        bounds = getattr(spec, kind)
        if bounds is not None:
            return [(bounds[0], f"{field}.{kind}[0]"), (bounds[1], f"{field}.{kind}[1]")]
    return []


def _check_values(file: SweepFile, base: SweepBase) -> None:
    for name, spec in file.parameters.items():
        if name == "point":
            raise InputError(
                "'point' is the table's first column",
                expected="another parameter name",
                location=Location(field="parameters.point"),
            )
        base.check_parameter(name, spec)
        for value, field in _values_to_check(name, spec):
            if isinstance(value, float) and not math.isfinite(value):
                raise InputError(
                    f"got {value!r}", expected="a finite number", location=Location(field=field)
                )
            base.check_value(name, spec, value, field)


def _figures(file: SweepFile, base: SweepBase) -> tuple[str, ...]:
    figures = tuple(file.figures) if file.figures is not None else base.default_figures()
    names = set(file.parameters) | {"point"}
    for i, figure in enumerate(figures):
        field = f"figures[{i}]"
        if figure in names or figure in figures[:i]:
            raise InputError(
                f"{figure!r} is already a column",
                expected="figure names distinct from each other, from the parameters and "
                "from 'point'",
                location=Location(field=field),
            )
        base.check_figure(figure, field)
    for figure in (*file.objectives, *file.constraints):
        if figure not in figures:
            field = "objectives" if figure in file.objectives else "constraints"
            raise InputError(
                f"{figure!r} is not a collected figure",
                expected="one of " + ", ".join(figures),
                location=Location(field=f"{field}.{figure}"),
            )
    for i, pair in enumerate(file.pareto):
        for j, figure in enumerate(pair):
            if figure not in file.objectives:
                raise InputError(
                    f"{figure!r} has no direction",
                    expected="a figure listed under objectives (min or max)",
                    location=Location(field=f"pareto[{i}][{j}]"),
                )
    return figures


def load_sweep(path: Path, bases: BaseRegistry) -> Sweep:
    """The sweep at ``path``, its base made by ``bases[kind]`` and every value checked."""
    data, index = _read(path)
    source = str(path)
    try:
        file = validate_model(SweepFile, data)
        base = _make_base(file, bases, path.parent)
        _check_values(file, base)
        figures = _figures(file, base)
        points = expand(file.parameters, file.search)
    except InputError as err:
        if err.location.source is not None:
            raise
        field = err.location.field or ""
        loc = Location(source, index.line_of(field), field or None)
        raise InputError(err.problem, expected=err.expected, location=loc) from None
    # What shapes the rows; name, objectives, constraints and pareto only read them.
    settings = file.model_dump(mode="json", include={"base", "parameters", "search"})
    settings["figures"] = list(figures)
    text = json.dumps({"sweep": settings, "base": base.digest()}, sort_keys=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    return Sweep(source, file, base, points, figures, digest)
