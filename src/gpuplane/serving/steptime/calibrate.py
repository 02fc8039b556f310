"""Fit a :class:`Calibration` to Vidur's measurements and measure how well it fits.

Per GPU family, each operator class gets its own efficiencies: the four projections (and a pooled
``gemm`` fit used for other matrix multiplies: LM head, MoE router and experts) fit MFU, bandwidth
efficiency, a fixed time and the roofline sharpness; memory-bound operators fit bandwidth
efficiency and a fixed time; prefill attention fits separate efficiencies for the context
rectangle and the causal triangle. All-reduces fit bandwidth efficiency and latency per link kind
(NVLink, PCIe); the CPU overhead a fixed and a per-request time. What a family has no
measurements of is borrowed from the family that has (and recorded as borrowed).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from gpuplane.serving.steptime.allreduce import allreduce_s
from gpuplane.serving.steptime.calibration import (
    Calibration,
    CollectiveParams,
    ErrorStats,
    FamilyCalibration,
    OverheadParams,
)
from gpuplane.serving.steptime.dataset import (
    CollectiveSamples,
    Samples,
    VidurDataset,
)
from gpuplane.serving.steptime.fit import (
    Param,
    error_stats,
    fit_collective,
    fit_linear_nonnegative,
    fit_op_params,
)
from gpuplane.serving.steptime.opcost import OpParams, op_time
from gpuplane.serving.steptime.operators import Op
from gpuplane.serving.steptime.vidur_data import GPU_DIRS
from gpuplane.topology.collective import DEFAULT_HOP_LATENCY_S

Array = npt.NDArray[np.float64]
SOURCE = (
    "Vidur profiling data (microsoft/vidur @7d47513 compute/network; @acb95f6 attention and CPU "
    "overheads), fp16 medians"
)
GENERATED_BY = "gpuplane serving calibrate --vidur <shared/data/vidur>"

_GEMM = [
    Param("mfu", "fraction", 0.7),
    Param("bw_eff", "fraction", 0.8),
    Param("fixed_s", "positive", 5e-6),
    Param("sharpness", "sharpness", 2.0),
]
_MEMORY = [
    Param("bw_eff", "fraction", 0.5),
    Param("fixed_s", "positive", 3e-6),
    Param("fixed_sharpness", "sharpness", 2.0),
]
FREE_PARAMS: dict[str, list[Param]] = {
    Op.QKV_PROJ.value: _GEMM,
    Op.O_PROJ.value: _GEMM,
    Op.GATE_UP_PROJ.value: _GEMM,
    Op.DOWN_PROJ.value: _GEMM,
    Op.GEMM.value: _GEMM,
    Op.EMBEDDING.value: _MEMORY,
    Op.NORM.value: _MEMORY,
    Op.ROPE.value: _MEMORY,
    Op.ACT.value: _MEMORY,
    Op.RESIDUAL_ADD.value: _MEMORY,
    Op.ATTENTION_PREFILL.value: [
        Param("mfu", "fraction", 0.5),
        Param("mfu_causal", "fraction", 0.2),
        Param("bw_eff", "fraction", 0.5),
        Param("fixed_s", "positive", 1e-5),
        Param("sharpness", "sharpness", 2.0),
    ],
    Op.ATTENTION_DECODE.value: [
        Param("bw_eff", "fraction", 0.7),
        Param("fixed_s", "positive", 1e-5),
    ],
}


def predict_op(params: OpParams, samples: Samples, peaks: tuple[float, float]) -> Array:
    return np.asarray(op_time(params, samples.work, peaks[0], peaks[1]).total_s)


def predict_collective(params: CollectiveParams, samples: CollectiveSamples) -> Array:
    return np.asarray(
        allreduce_s(params, samples.num_gpus, samples.bottleneck_gbps, samples.size_bytes)
    )


def _fit_family(ds: VidurDataset, family: str) -> FamilyCalibration:
    peaks = ds.peaks[family]
    operators: dict[str, OpParams] = {}
    errors: dict[str, ErrorStats] = {}
    for (fam, op), samples in sorted(ds.ops.items()):
        if fam != family:
            continue
        params = fit_op_params(samples.work, samples.measured_s, *peaks, FREE_PARAMS[op])
        operators[op] = params
        errors[op] = error_stats(predict_op(params, samples, peaks), samples.measured_s)
    collectives: dict[str, CollectiveParams] = {}
    for (fam, kind), cs in sorted(ds.collectives.items()):
        if fam != family:
            continue
        coll = fit_collective(cs.num_gpus, cs.bottleneck_gbps, cs.size_bytes, cs.measured_s)
        collectives[kind] = coll
        errors[f"all_reduce_{kind}"] = error_stats(predict_collective(coll, cs), cs.measured_s)
    fixed, per_request = fit_linear_nonnegative(ds.overhead.batch_size, ds.overhead.overhead_s)
    overhead = OverheadParams(fixed, per_request)
    if family == "a100":
        predicted = fixed + per_request * ds.overhead.batch_size
        errors["cpu_overhead"] = error_stats(predicted, ds.overhead.overhead_s)
    return FamilyCalibration(family, GPU_DIRS[family], operators, collectives, overhead, errors)


def fit_calibration(ds: VidurDataset) -> Calibration:
    """Fit every family, then fill each family's gaps from the other (marked as borrowed)."""
    fitted = {family: _fit_family(ds, family) for family in ds.peaks}
    done: dict[str, FamilyCalibration] = {}
    for family, cal in fitted.items():
        borrowed: dict[str, str] = {}
        operators = dict(cal.operators)
        for other, other_cal in fitted.items():
            if other == family:
                continue
            for op, params in other_cal.operators.items():
                if op not in operators:
                    operators[op], borrowed[op] = params, other
            if "cpu_overhead" not in cal.errors and "cpu_overhead" in other_cal.errors:
                borrowed["cpu_overhead"] = other
        done[family] = FamilyCalibration(
            family, cal.gpu, operators, cal.collectives, cal.overhead, cal.errors, borrowed
        )
    return Calibration(done, SOURCE, GENERATED_BY)


def uncalibrated(cal: Calibration) -> Calibration:
    """The pure roofline on the same families: peak FLOP/s and bandwidth, hard maximum, no
    fixed costs; all-reduces at the links' nominal bandwidth with topology's default hop
    latency; no CPU overhead. The baseline the calibration is judged against."""
    families = {}
    for name, fam in cal.families.items():
        families[name] = FamilyCalibration(
            name,
            fam.gpu,
            {op: OpParams() for op in fam.operators},
            {kind: CollectiveParams(1.0, 0.0, DEFAULT_HOP_LATENCY_S) for kind in fam.collectives},
            OverheadParams(),
        )
    return Calibration(families, "uncalibrated roofline", "gpuplane.serving.steptime.calibrate")
