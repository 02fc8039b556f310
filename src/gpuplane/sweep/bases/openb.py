"""The OpenB experiment as a sweep base: one point = one (trace, policy, seed) run of the FGD
paper's protocol (fgd-openb.md §6), what ``bench/openb_all.py`` ran in its own process pool.

Settings (under ``base: {openb: ...}``): ``data`` (the folder of OpenB CSV files; default: the
one the caller found), ``nodes`` (the node list), and the defaults of the knobs a sweep may vary:
``trace`` (a pod list, ``openb_pod_list_<trace>.csv``), ``policy``, ``seed``, ``tune_ratio``.
Figures: ``unallocated_pct_at_100`` (the paper's metric), ``unallocated_pct_at_<N>`` for any
arrived % N in 0-130, ``frag_pct_at_100`` (tracks fragmentation: slower), ``failed_pods``,
``arrivals``, ``wall_s`` (the run's own time, not reproducible: leave it out where tables must
match).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gpuplane.core.errors import InputError, Location
from gpuplane.scheduler.openb.experiment import run_seed
from gpuplane.scheduler.openb.trace import NodeTable, PodTable, load_nodes, load_pods
from gpuplane.scheduler.openb.workload import TUNE_RATIO
from gpuplane.scheduler.policies import POLICY_NAMES
from gpuplane.sweep.engine.checks import no_knob, settings_at, with_knob
from gpuplane.sweep.engine.point import Cell, Point, Value
from gpuplane.sweep.engine.spec import ParameterSpec

KNOBS = ("trace", "policy", "seed", "tune_ratio")
FIGURES = ("unallocated_pct_at_100", "frag_pct_at_100", "failed_pods", "arrivals", "wall_s")
DEFAULT_FIGURES = ("unallocated_pct_at_100", "failed_pods", "arrivals")
_AT = re.compile(r"unallocated_pct_at_(\d{1,3})")
DEFAULT_NODES = "openb_node_list_gpu_node.csv"


class OpenbSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    data: str | None = Field(None, description="the folder of the OpenB CSV files")
    nodes: str = Field(DEFAULT_NODES, description="the node list, in data")
    trace: str = Field("default", description="the pod list openb_pod_list_<trace>.csv")
    policy: str = Field("gpuplane", description="one of " + ", ".join(POLICY_NAMES))
    seed: int = Field(42, ge=0)
    tune_ratio: float = Field(TUNE_RATIO, ge=0, allow_inf_nan=False)


@dataclass(frozen=True, slots=True)
class OpenbBase:
    settings: OpenbSettings
    data: Path
    nodes: NodeTable
    # trace -> pod list, filled as the sweep's trace values are checked (so the workers get
    # every table they need with the base, and read no file).
    pods: dict[str, PodTable] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)

    kind = "openb"

    def _pods(self, trace: str, where: str) -> PodTable:
        if trace not in self.pods:
            path = self.data / f"openb_pod_list_{trace}.csv"
            if not path.is_file():
                names = sorted(
                    p.stem.removeprefix("openb_pod_list_")
                    for p in self.data.glob("openb_pod_list_*.csv")
                )
                raise InputError(
                    f"no pod list {path}",
                    expected="one of " + (", ".join(names) or f"the traces in {self.data}"),
                    location=Location(field=where),
                )
            self.pods[trace] = load_pods(path)
            self.digests[trace] = hashlib.sha256(path.read_bytes()).hexdigest()
        return self.pods[trace]

    def check_parameter(self, name: str, spec: ParameterSpec) -> None:
        where = f"parameters.{name}"
        if spec.path is not None or spec.keda is not None:
            raise InputError(
                "the OpenB base has no scenario to set a field of",
                expected="a parameter named " + ", ".join(KNOBS) + ", without path or keda",
                location=Location(field=f"{where}.{'path' if spec.path else 'keda'}"),
            )
        if name not in KNOBS:
            raise no_knob("OpenB", name, KNOBS, where)

    def check_value(self, name: str, spec: ParameterSpec, value: Value, field: str) -> None:
        if name == "trace":
            self._pods(str(value), field)
            return
        with_knob(self.settings, name, value, field, data=None)
        if name == "policy" and value not in POLICY_NAMES:
            raise InputError(
                f"unknown policy {value!r}",
                expected="one of " + ", ".join(POLICY_NAMES),
                location=Location(field=field),
            )

    def default_figures(self) -> tuple[str, ...]:
        return DEFAULT_FIGURES

    def check_figure(self, name: str, field: str) -> None:
        at = _AT.fullmatch(name)
        if name in FIGURES or (at is not None and int(at.group(1)) <= 130):
            return
        raise InputError(
            f"the OpenB base has no figure {name!r}",
            expected="one of " + ", ".join(FIGURES) + ", or unallocated_pct_at_N (N in 0-130)",
            location=Location(field=field),
        )

    def digest(self) -> str:
        text = repr((self.settings.model_dump(), sorted(self.digests.items())))
        return hashlib.sha256(text.encode()).hexdigest()

    def evaluate(self, point: Point, figures: tuple[str, ...]) -> dict[str, Cell]:
        knobs: dict[str, Any] = {k: getattr(self.settings, k) for k in KNOBS}
        knobs.update(point.as_dict())
        result = run_seed(
            self.nodes,
            self._pods(str(knobs["trace"]), "trace"),
            str(knobs["policy"]),
            int(knobs["seed"]),
            tune_ratio=float(knobs["tune_ratio"]),
            track_frag="frag_pct_at_100" in figures,
        )
        out: dict[str, Cell] = {}
        for name in figures:
            at = _AT.fullmatch(name)
            if at is not None:
                value = float(result.unallocated_curve[int(at.group(1))])
                out[name] = None if value != value else value
            elif name == "frag_pct_at_100":
                out[name] = result.frag_pct_at_100
            elif name == "failed_pods":
                out[name] = result.num_failed
            elif name == "wall_s":  # the run's own time: not reproducible
                out[name] = round(result.wall_s, 3)
            else:
                out[name] = result.num_arrivals
        return out


def openb_base(settings: Any, folder: Path, where: str, default_data: Path | None) -> OpenbBase:
    """The base from its settings; ``data`` relative to the sweep file's folder."""
    s = settings_at(OpenbSettings, settings, where)
    data = folder / s.data if s.data is not None else default_data
    if data is None or not data.is_dir():
        raise InputError(
            f"no OpenB data folder {data}" if data else "no OpenB data folder found",
            expected="data: the folder of the OpenB CSV files (shared/data/openb)",
            location=Location(field=f"{where}.data"),
        )
    nodes_path = data / s.nodes
    if not nodes_path.is_file():
        raise InputError(
            f"no node list {nodes_path}",
            expected="nodes: a node list CSV in data",
            location=Location(field=f"{where}.nodes"),
        )
    base = OpenbBase(s, data, load_nodes(nodes_path))
    base.digests["nodes"] = hashlib.sha256(nodes_path.read_bytes()).hexdigest()
    base._pods(s.trace, f"{where}.trace")
    if s.policy not in POLICY_NAMES:
        raise InputError(
            f"unknown policy {s.policy!r}",
            expected="one of " + ", ".join(POLICY_NAMES),
            location=Location(field=f"{where}.policy"),
        )
    return base
