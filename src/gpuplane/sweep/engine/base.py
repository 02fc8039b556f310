"""What one point of a sweep runs: the base protocol every base kind implements.

A base is a frozen, picklable value: the runner ships it once to each worker (a process of the
local pool, or Ray's object store) and calls :meth:`SweepBase.evaluate` there, so a base keeps
the data it needs (tables, the scenario's text) in itself, loaded by :meth:`SweepBase.prepare`
in the driver, and reads no file on the worker.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from gpuplane.sweep.engine.point import Cell, Point, Value
from gpuplane.sweep.engine.spec import ParameterSpec


class SweepBase(Protocol):
    """One kind of base: an OpenB experiment, a scenario run, a ``fit`` question, ..."""

    @property
    def kind(self) -> str: ...

    def check_parameter(self, name: str, spec: ParameterSpec) -> None:
        """Raise a located InputError (field ``parameters.NAME...``) if this base cannot take the
        parameter: an unknown knob, a path into nothing, a target it does not support."""

    def check_value(self, name: str, spec: ParameterSpec, value: Value, field: str) -> None:
        """Raise a located InputError (``field``) if ``value`` is not valid for the parameter,
        checked the way the base's own input is checked (a scenario field: the scenario loader)."""

    def default_figures(self) -> tuple[str, ...]:
        """What the table holds when the sweep file names no figures."""

    def check_figure(self, name: str, field: str) -> None:
        """Raise a located InputError if the base cannot produce figure ``name``."""

    def digest(self) -> str:
        """A digest of everything the base reads (files, settings): a changed digest means the
        results already in the table were made from other input, so a restart must not keep
        them."""

    def evaluate(self, point: Point, figures: tuple[str, ...]) -> dict[str, Cell]:
        """Run the point; ``figures`` in that order. Deterministic: the same point, the same
        figures, whichever process runs it."""


# (settings as written under the base's key, the sweep file's folder, the field for errors)
BaseFactory = Callable[[Any, Path, str], SweepBase]
BaseRegistry = Mapping[str, BaseFactory]
