"""Calibrated efficiencies per GPU family, stored in ``serving/data/steptime_calibration.json``.

Vidur measured per-operator kernel times on an A100-80GB and an H100-80GB (fp16), NCCL all-reduces
on DGX A100/H100 and on 4-GPU boards with NVLink pairs, and engine CPU overheads on an A100 host.
``gpuplane serving calibrate`` fits the roofline's efficiencies to those medians and writes them
here together with the error of the fit. A GPU without measurements uses the nearest measured
family's efficiencies applied to its own catalog peaks (FLOP/s and HBM bandwidth), and is marked
extrapolated; so are operators a family has no measurements of (attention on H100, whose only
attention profile is the A100's).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import read_user_text
from gpuplane.serving.steptime.opcost import OpParams
from gpuplane.topology.catalog import GpuModel

CALIBRATION_FILE = "data/steptime_calibration.json"
FAMILY_OF_ARCH = {
    "ampere": "a100",
    "ada-lovelace": "a100",
    "turing": "a100",
    "volta": "a100",
    "hopper": "h100",
    "blackwell": "h100",
}


@dataclass(frozen=True, slots=True)
class CollectiveParams:
    """Ring all-reduce over one link kind: achieved fraction of the bottleneck bandwidth and a
    latency of ``latency_s + hop_latency_s x 2(n-1)``."""

    bw_eff: float = 1.0
    latency_s: float = 0.0
    hop_latency_s: float = 0.0


@dataclass(frozen=True, slots=True)
class OverheadParams:
    """Per-step CPU time: scheduling, input preparation, sampling and output processing."""

    fixed_s: float = 0.0
    per_request_s: float = 0.0


@dataclass(frozen=True, slots=True)
class ErrorStats:
    n: int
    mape_pct: float
    p90_pct: float

    def to_dict(self) -> dict[str, float]:
        return {"n": self.n, "mape_pct": round(self.mape_pct, 2), "p90_pct": round(self.p90_pct, 2)}


@dataclass(frozen=True, slots=True)
class FamilyCalibration:
    """Everything fitted for one measured GPU."""

    family: str
    gpu: str
    operators: dict[str, OpParams]
    collectives: dict[str, CollectiveParams]
    overhead: OverheadParams
    errors: dict[str, ErrorStats] = field(default_factory=dict)
    borrowed: dict[str, str] = field(default_factory=dict)
    """Operator -> family its parameters were taken from (no measurement on this GPU)."""


@dataclass(frozen=True, slots=True)
class GpuCalibration:
    """The calibration a step-time model uses on one GPU model."""

    gpu: GpuModel
    family: FamilyCalibration
    extrapolated: bool

    def op(self, name: str) -> OpParams:
        params = self.family.operators.get(name)
        return params if params is not None else self.family.operators["gemm"]

    def is_extrapolated(self, op: str) -> bool:
        return self.extrapolated or op in self.family.borrowed

    def collective(self, link_kind: str) -> CollectiveParams:
        return self.family.collectives.get(link_kind) or self.family.collectives["nvlink"]


@dataclass(frozen=True, slots=True)
class Calibration:
    families: dict[str, FamilyCalibration]
    source: str
    generated_by: str

    def for_gpu(self, gpu: GpuModel) -> GpuCalibration:
        for family in self.families.values():
            if family.gpu == gpu.name:
                return GpuCalibration(gpu, family, extrapolated=False)
        nearest = FAMILY_OF_ARCH.get(gpu.family, "a100")
        return GpuCalibration(gpu, self.families[nearest], extrapolated=True)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": 1,
            "source": self.source,
            "generated_by": self.generated_by,
            "families": {name: _family_to_dict(f) for name, f in self.families.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str) -> Calibration:
        try:
            families = {k: _family_from_dict(k, v) for k, v in data["families"].items()}
            return cls(families, str(data["source"]), str(data["generated_by"]))
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise InputError(
                f"not a step-time calibration: {err!r}",
                expected="a file written by `gpuplane serving calibrate`",
                location=Location(source),
            ) from None


def _family_to_dict(f: FamilyCalibration) -> dict[str, Any]:
    return {
        "gpu": f.gpu,
        "operators": {k: v.to_dict() for k, v in f.operators.items()},
        "collectives": {
            k: {
                "bw_eff": v.bw_eff,
                "latency_us": v.latency_s * 1e6,
                "hop_latency_us": v.hop_latency_s * 1e6,
            }
            for k, v in f.collectives.items()
        },
        "overhead": {
            "fixed_us": f.overhead.fixed_s * 1e6,
            "per_request_us": f.overhead.per_request_s * 1e6,
        },
        "borrowed": f.borrowed,
        "errors": {k: v.to_dict() for k, v in f.errors.items()},
    }


def _family_from_dict(name: str, d: dict[str, Any]) -> FamilyCalibration:
    return FamilyCalibration(
        family=name,
        gpu=str(d["gpu"]),
        operators={k: OpParams.from_dict(v) for k, v in d["operators"].items()},
        collectives={
            k: CollectiveParams(
                float(v["bw_eff"]), float(v["latency_us"]) * 1e-6, float(v["hop_latency_us"]) * 1e-6
            )
            for k, v in d["collectives"].items()
        },
        overhead=OverheadParams(
            float(d["overhead"]["fixed_us"]) * 1e-6, float(d["overhead"]["per_request_us"]) * 1e-6
        ),
        errors={
            k: ErrorStats(int(v["n"]), float(v["mape_pct"]), float(v["p90_pct"]))
            for k, v in d.get("errors", {}).items()
        },
        borrowed={str(k): str(v) for k, v in d.get("borrowed", {}).items()},
    )


def load_calibration(path: Path) -> Calibration:
    try:
        text = read_user_text(path)
        data = json.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(
            f"cannot read the calibration: {err}",
            expected="a JSON file written by `gpuplane serving calibrate`",
            location=Location(str(path)),
        ) from None
    if not isinstance(data, dict):
        raise InputError("not a JSON object", location=Location(str(path)))
    return Calibration.from_dict(data, str(path))


@lru_cache(maxsize=1)
def default_calibration() -> Calibration:
    text = resources.files("gpuplane.serving").joinpath(CALIBRATION_FILE).read_text("utf-8")
    return Calibration.from_dict(json.loads(text), f"gpuplane/serving/{CALIBRATION_FILE}")
