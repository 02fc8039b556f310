"""The sweep file's shape (``gpuplane sweep SWEEP.yaml``), as pydantic models.

A sweep names a base (what one point runs), the parameters to vary, how to pick points (a grid or
seeded random samples) and the figures to collect. What a parameter's target means (a scenario
field path, a ScaledObject field, a base-level knob such as ``seed`` or ``policy``) is the base's
business: the models here only check the shape; the base checks the meaning.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Scalar = bool | int | float | str

_DOMAINS = ("values", "range", "uniform", "log_uniform", "integers")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RangeSpec(_Strict):
    """``start`` to ``stop`` inclusive by ``step`` (whole numbers stay whole numbers)."""

    start: int | float
    stop: int | float
    step: int | float = Field(1, description="a positive step")

    @model_validator(mode="after")
    def _check(self) -> RangeSpec:
        if not self.step > 0:
            raise ValueError(f"step must be positive, got {self.step}")
        if self.stop < self.start:
            raise ValueError(f"stop {self.stop} is below start {self.start}")
        return self


class KedaTarget(_Strict):
    """A field of a ScaledObject the scenario loads, by the ScaledObject's name and a path in
    its manifest, e.g. ``spec.triggers[0].metadata.threshold`` or ``spec.pollingInterval``."""

    scaled_object: str = Field(description="metadata.name of a ScaledObject in the scenario")
    path: str = Field(description="a field path in the ScaledObject manifest")


class ParameterSpec(_Strict):
    """One parameter: where it goes (``path``, ``keda`` or, without either, a knob of the base
    named by the parameter's key) and its domain (exactly one of values, range, uniform,
    log_uniform, integers)."""

    path: str | None = Field(None, description="a scenario field path, e.g. workloads[0].count")
    keda: KedaTarget | None = None
    values: list[Scalar] | str | None = Field(
        None, description="a list of values, or a whole-number range such as '42-51'"
    )
    range: RangeSpec | None = None
    uniform: tuple[float, float] | None = Field(None, description="[low, high], random search")
    log_uniform: tuple[float, float] | None = Field(
        None, description="[low, high], both > 0, random search"
    )
    integers: tuple[int, int] | None = Field(None, description="[low, high] inclusive")

    @model_validator(mode="after")
    def _one_domain(self) -> ParameterSpec:
        given = [d for d in _DOMAINS if getattr(self, d) is not None]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of "
                + ", ".join(_DOMAINS)
                + f" (got {', '.join(given) or 'none'})"
            )
        if self.path is not None and self.keda is not None:
            raise ValueError("give path or keda, not both")
        for name in ("uniform", "log_uniform", "integers"):
            bounds = getattr(self, name)
            if bounds is not None and not bounds[0] <= bounds[1]:
                raise ValueError(f"{name}: low {bounds[0]} is above high {bounds[1]}")
        if self.log_uniform is not None and self.log_uniform[0] <= 0:
            raise ValueError("log_uniform: low must be > 0")
        if isinstance(self.values, list) and not self.values:
            raise ValueError("values is empty")
        return self


class RandomSearch(_Strict):
    samples: int = Field(gt=0, le=1_000_000, description="how many points to draw")
    seed: int = Field(0, ge=0, description="the draw's seed (the same seed, the same points)")


class SearchSpec(_Strict):
    """``grid: {}`` (every combination, the default) or ``random: {samples, seed}``."""

    grid: dict[str, Any] | None = None
    random: RandomSearch | None = None

    @model_validator(mode="after")
    def _one(self) -> SearchSpec:
        if self.grid is not None and self.random is not None:
            raise ValueError("give grid or random, not both")
        if self.grid:
            raise ValueError("grid takes no settings: write grid: {}")
        return self


class Bounds(_Strict):
    """A constraint on a figure: the points outside it are not among the best."""

    min: float | None = None
    max: float | None = None


class SweepFile(_Strict):
    name: str = Field(min_length=1, description="the sweep's name (the default output folder)")
    description: str = ""
    base: dict[str, Any] = Field(
        description="one key naming the base kind (e.g. openb, scenario), its settings as value"
    )
    parameters: dict[str, ParameterSpec] = Field(
        min_length=1, description="name -> parameter; the names are the table's columns"
    )
    search: SearchSpec = SearchSpec()
    figures: list[str] | None = Field(
        None, description="the figures to collect (default: the base's default figures)"
    )
    objectives: dict[str, Literal["min", "max"]] = Field(
        default_factory=dict, description="figure -> min or max: how the best points rank"
    )
    constraints: dict[str, Bounds] = Field(
        default_factory=dict, description="figure -> {min, max}: what a best point must meet"
    )
    pareto: list[tuple[str, str]] = Field(
        default_factory=list, description="pairs of objective figures to draw a Pareto front for"
    )
    best: int = Field(5, ge=1, le=1000, description="how many best points the summary lists")
