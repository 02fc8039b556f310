"""The autoscaling benchmark as a sweep base: one point = one scaler configuration on one trace
and cold start, run in the twin with the benchmark's instruments (docs/autoscaling.md).

Settings (under ``base: {autoscaling: ...}``), files relative to the sweep file:

- ``keda_scenario`` / ``slo_scenario``: the service scaled by its ScaledObject, and by gpuplane's
  SLO-aware scaler (the ``keda*`` families use the first, ``slo`` and ``oracle`` the second; the
  oracle drops the scenario's scaler and scales the Deployment itself);
- ``traces``: name -> ``{file, rate_scale}`` (an Azure LLM inference trace CSV; the rate scale
  divides every inter-arrival and repeats the compressed trace to fill the run);
- ``cold_starts``: name -> ``{image_pull, storage_gbps, init}`` (the scenario's ``cold_start``);
- ``warmup`` (traffic starts once the initial replicas are Ready; default 5m), ``traffic`` (how
  long it lasts; default 1h), ``ttft`` and ``tpot`` (the objective: TTFT within ``ttft`` and mean
  TPOT within ``tpot`` per request, TTFT-P90 within ``ttft`` and ITL-P99 within ``tpot`` per
  minute; default 2s and 200ms), ``seed``.

Knobs: ``trace``, ``cold_start`` (names from the settings), ``config`` (a scaler configuration,
``sweep.bases.autoscale_configs``: ``keda:queue=2``, ``slo:objective=per_request``,
``oracle``), ``seed``.
Figures: see ``FIGURES``. The traces and scenarios are read once, in the driver, and travel with
the base: a worker reads no file.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gpuplane.autoscaler.slo.capacity import SloTargets
from gpuplane.core.duration import parse_duration_s
from gpuplane.core.errors import InputError, Location
from gpuplane.k8s.scenario.loader import load_scenario_spec
from gpuplane.serving.cold_start import ColdStart
from gpuplane.serving.traffic.azure import load_azure_trace
from gpuplane.serving.traffic.trace import Trace
from gpuplane.sweep.bases.autoscale_configs import (
    KEDA_FAMILIES,
    Config,
    keda_object,
    oracle_targets,
    parse_config,
    slo_settings,
    slo_signals,
)
from gpuplane.sweep.engine.checks import settings_at
from gpuplane.sweep.engine.point import Cell, Point, Value
from gpuplane.sweep.engine.spec import ParameterSpec
from gpuplane.twin.autoscale_bench import Bench, run_figures, run_instrumented
from gpuplane.twin.build import simulation_from_spec
from gpuplane.twin.scenario.serving_spec import SignalSource
from gpuplane.twin.scenario.spec import ScenarioSpec

KNOBS = ("trace", "cold_start", "config", "seed")
FIGURES = {
    "gpu_hours": "GPU-hours allocated, plus what terminating pods held while they drained",
    "attainment": "per request: share of requests with TTFT <= ttft and mean TPOT <= tpot",
    "windows_met": "per minute: share of 1-minute windows with TTFT-P90 and ITL-P99 met",
    "windows_ttft_met": "share of 1-minute windows with TTFT-P90 <= ttft",
    "windows_itl_met": "share of 1-minute windows with ITL-P99 <= tpot",
    "ttft_p90_s": "TTFT P90 over the run",
    "itl_p99_s": "ITL P99 over the run",
    "arrived": "requests arrived",
    "aborted_at_kill": "requests aborted when a terminating pod's grace period ran out",
    "terminating_gpu_hours": "GPU-hours held by terminating pods",
    "scale_events": "replica changes",
    "oscillations": "direction changes of the replica count",
    "mean_replicas": "spec replicas, mean of 15 s samples",
    "max_replicas": "spec replicas, highest sample",
    "wall_s": "the run's own time (not reproducible: leave it out where tables must match)",
}
DEFAULT_FIGURES = ("gpu_hours", "attainment", "windows_met", "aborted_at_kill", "scale_events")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TraceSettings(_Strict):
    file: str = Field(description="an Azure LLM inference trace CSV, relative to the sweep file")
    rate_scale: float = Field(1.0, gt=0, allow_inf_nan=False)


class ColdStartSettings(_Strict):
    image_pull: str | float = "90s"
    storage_gbps: float = Field(2.0, gt=0, allow_inf_nan=False)
    init: str | float = "60s"


class AutoscalingSettings(_Strict):
    keda_scenario: str = Field(description="the service scaled by its ScaledObject")
    slo_scenario: str = Field(description="the same service scaled by the SLO-aware scaler")
    traces: dict[str, TraceSettings] = Field(min_length=1)
    cold_starts: dict[str, ColdStartSettings] = Field(min_length=1)
    warmup: str | float = "5m"
    traffic: str | float = "1h"
    ttft: str | float = "2s"
    tpot: str | float = "200ms"
    seed: int = Field(0, ge=0)
    trace: str | None = Field(None, description="default trace (the first one)")
    cold_start: str | None = Field(None, description="default cold start (the first one)")
    config: str = Field("keda", description="default configuration")

    def trace_name(self) -> str:
        return self.trace or next(iter(self.traces))

    def cold_start_name(self) -> str:
        return self.cold_start or next(iter(self.cold_starts))


@dataclass(frozen=True, slots=True)
class AutoscalingBase:
    settings: AutoscalingSettings
    keda_spec: ScenarioSpec
    slo_spec: ScenarioSpec
    traces: dict[str, Trace]
    cold_starts: dict[str, ColdStart]
    seconds: dict[str, float]  # warmup, traffic, ttft, tpot
    file_digest: str

    kind = "autoscaling"

    def check_parameter(self, name: str, spec: ParameterSpec) -> None:
        where = f"parameters.{name}"
        if spec.path is not None or spec.keda is not None:
            raise InputError(
                "the autoscaling base varies scaler configurations, not scenario fields",
                expected="config: FAMILY:KNOB=VALUE,... (e.g. keda:queue=2), or "
                + ", ".join(KNOBS),
                location=Location(field=f"{where}.{'path' if spec.path else 'keda'}"),
            )
        if name not in KNOBS:
            raise InputError(
                f"the autoscaling base has no knob {name!r}",
                expected="one of " + ", ".join(KNOBS),
                location=Location(field=where),
            )

    def check_value(self, name: str, spec: ParameterSpec, value: Value, field: str) -> None:
        if name in ("trace", "cold_start"):
            known = self.traces if name == "trace" else self.cold_starts
            if str(value) not in known:
                raise InputError(
                    f"no {name.replace('_', ' ')} {value!r} in the base's settings",
                    expected="one of " + ", ".join(known),
                    location=Location(field=field),
                )
        elif name == "seed":
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InputError(
                    f"seed {value!r}",
                    expected="a whole number >= 0",
                    location=Location(field=field),
                )
        else:
            self.apply(parse_config(str(value), field), field)

    def default_figures(self) -> tuple[str, ...]:
        return DEFAULT_FIGURES

    def check_figure(self, name: str, field: str) -> None:
        if name not in FIGURES:
            raise InputError(
                f"the autoscaling base has no figure {name!r}",
                expected="one of " + ", ".join(FIGURES),
                location=Location(field=field),
            )

    def digest(self) -> str:
        text = repr((self.settings.model_dump(), self.file_digest))
        return hashlib.sha256(text.encode()).hexdigest()

    def apply(self, config: Config, field: str) -> ScenarioSpec:
        """The scenario one configuration runs (without the trace: see :meth:`spec_for`)."""
        if config.family in KEDA_FAMILIES:
            (so,) = self.keda_spec.scaled_objects
            return replace(self.keda_spec, scaled_objects=(keda_object(so, config, field),))
        spec = self.slo_spec
        assert spec.serving is not None
        if config.family == "oracle":
            oracle_targets(1.0, 1.0, config, field)  # checks the knobs
            return replace(spec, serving=replace(spec.serving, slo_scalers=()))
        (scaler,) = spec.serving.slo_scalers
        settings = slo_settings(scaler.settings, config, field)
        signals = SignalSource(slo_signals(scaler.signals.value, config, field))
        scaler = replace(scaler, settings=settings, signals=signals)
        serving = replace(spec.serving, slo_scalers=(scaler,))
        return replace(spec, serving=serving)

    def spec_for(self, config: Config, trace: str, cold: str, field: str) -> ScenarioSpec:
        spec = self.apply(config, field)
        assert spec.serving is not None
        svc = spec.serving.services[0]
        traffic = replace(
            svc.traffic,
            trace=self.traces[trace],
            rate_scale=self.settings.traces[trace].rate_scale,
            repeat=True,
            start_s=self.seconds["warmup"],
            duration_s=self.seconds["traffic"],
        )
        svc = replace(
            svc, traffic=traffic, slo_ttft_s=self.seconds["ttft"], slo_itl_s=self.seconds["tpot"]
        )
        serving = replace(spec.serving, services=(svc,), cold_start=self.cold_starts[cold])
        return replace(spec, serving=serving)

    def bench(self, spec: ScenarioSpec, config: Config) -> Bench:
        """What the instruments watch; the oracle keeps the SLO scaler's replica bounds."""
        assert spec.serving is not None and self.slo_spec.serving is not None
        svc = spec.serving.services[0]
        if config.family in KEDA_FAMILIES:
            so = spec.scaled_objects[0]
            low, high = so.hpa_min_replicas(), so.hpa_max_replicas()
        else:
            scaler = self.slo_spec.serving.slo_scalers[0]
            low, high = scaler.min_replicas, scaler.max_replicas
        sec = self.seconds
        return Bench(
            svc.name,
            f"{svc.namespace}/{svc.deployment}",
            sec["warmup"],
            sec["traffic"],
            sec["ttft"],
            sec["tpot"],
            low,
            high,
        )

    def evaluate(self, point: Point, figures: tuple[str, ...]) -> dict[str, Cell]:
        s = self.settings
        knobs: dict[str, Any] = {
            "trace": s.trace_name(),
            "cold_start": s.cold_start_name(),
            "config": s.config,
            "seed": s.seed,
            **point.as_dict(),
        }
        where = f"point {point.index}"
        config = parse_config(str(knobs["config"]), where)
        spec = self.spec_for(config, str(knobs["trace"]), str(knobs["cold_start"]), where)
        ttft, tpot = self.seconds["ttft"], self.seconds["tpot"]
        targets = SloTargets(ttft, tpot)
        if config.family == "oracle":
            targets = oracle_targets(ttft, tpot, config, where)
        return run_bench(
            spec, self.bench(spec, config), config, targets, int(knobs["seed"]), figures
        )


def run_bench(
    spec: ScenarioSpec,
    bench: Bench,
    config: Config,
    oracle: SloTargets,
    seed: int,
    figures: tuple[str, ...],
) -> dict[str, Cell]:
    """One twin run with the instruments; the figures asked for, in that order."""
    until = bench.traffic_start_s + bench.traffic_s
    sim = simulation_from_spec(spec, seed=seed, keep_events=False)
    run = run_instrumented(sim, bench, oracle if config.family == "oracle" else None, until)
    values = run_figures(run, bench)
    return {name: values[name] for name in figures}


def _seconds(value: str | float, field: str) -> float:
    try:
        seconds = parse_duration_s(value)
    except InputError as exc:
        raise InputError(
            exc.problem, expected=exc.expected, location=Location(field=field)
        ) from None
    if not seconds > 0:
        raise InputError(f"{value!r}", expected="a duration > 0", location=Location(field=field))
    return seconds


def _file(folder: Path, name: str, field: str) -> Path:
    path = (folder / name).resolve()
    if not path.is_file():
        raise InputError(
            f"no file {path}",
            expected="a file, relative to the sweep file",
            location=Location(field=field),
        )
    return path


def _scenario(path: Path, field: str) -> ScenarioSpec:
    try:
        spec = load_scenario_spec(path).spec
    except InputError as exc:
        where = exc.location.render()
        problem = "the scenario is refused: " + (f"{where}: " if where else "") + exc.problem
        raise InputError(problem, expected=exc.expected, location=Location(field=field)) from None
    if spec.serving is None or len(spec.serving.services) != 1:
        raise InputError(
            f"{path} serves {0 if spec.serving is None else len(spec.serving.services)} services",
            expected="a scenario with one served model (examples/autoscaling/)",
            location=Location(field=field),
        )
    return spec


def autoscaling_base(settings: Any, folder: Path, where: str) -> AutoscalingBase:
    """The base from its settings: scenarios and traces read and checked once, here."""
    s = settings_at(AutoscalingSettings, settings, where)
    digest = hashlib.sha256()
    keda_path = _file(folder, s.keda_scenario, f"{where}.keda_scenario")
    slo_path = _file(folder, s.slo_scenario, f"{where}.slo_scenario")
    keda = _scenario(keda_path, f"{where}.keda_scenario")
    slo = _scenario(slo_path, f"{where}.slo_scenario")
    if len(keda.scaled_objects) != 1:
        raise InputError(
            f"{keda_path} loads {len(keda.scaled_objects)} ScaledObjects",
            expected="one ScaledObject scaling the served model",
            location=Location(field=f"{where}.keda_scenario"),
        )
    assert slo.serving is not None
    if len(slo.serving.slo_scalers) != 1:
        raise InputError(
            f"{slo_path} has {len(slo.serving.slo_scalers)} SLO scalers",
            expected="one slo_scalers entry for the served model",
            location=Location(field=f"{where}.slo_scenario"),
        )
    for path in (keda_path, slo_path):
        digest.update(path.read_bytes())
    traces: dict[str, Trace] = {}
    for name, t in s.traces.items():
        field = f"{where}.traces.{name}.file"
        path = _file(folder, t.file, field)
        try:
            traces[name] = load_azure_trace(path)
        except InputError as exc:
            raise InputError(
                exc.problem, expected=exc.expected, location=Location(field=field)
            ) from None
        digest.update(path.read_bytes())
    colds = {
        name: ColdStart(
            image_pull_s=_seconds(c.image_pull, f"{where}.cold_starts.{name}.image_pull"),
            storage_gbps=c.storage_gbps,
            init_s=_seconds(c.init, f"{where}.cold_starts.{name}.init"),
        )
        for name, c in s.cold_starts.items()
    }
    seconds = {
        k: _seconds(getattr(s, k), f"{where}.{k}") for k in ("warmup", "traffic", "ttft", "tpot")
    }
    for key, known in (("trace", traces), ("cold_start", colds)):
        chosen = getattr(s, key)
        if chosen is not None and chosen not in known:
            raise InputError(
                f"no {key.replace('_', ' ')} {chosen!r}",
                expected="one of " + ", ".join(known),
                location=Location(field=f"{where}.{key}"),
            )
    base = AutoscalingBase(s, keda, slo, traces, colds, seconds, digest.hexdigest())
    base.apply(parse_config(s.config, f"{where}.config"), f"{where}.config")
    return base
