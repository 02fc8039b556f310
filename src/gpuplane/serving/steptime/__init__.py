"""Engine step time: a calibrated roofline per operator, TP all-reduces over the real links.

``RooflineStepTime(model, gpu, tp, interconnect=...)`` implements ``serving.batch.StepTimeModel``.
Its efficiencies come from ``serving/data/steptime_calibration.json``, fitted to Vidur's measured
kernel times by ``gpuplane serving calibrate`` (``calibrate.fit_calibration``); GPUs without
measurements use the nearest measured family on their own catalog peaks (marked extrapolated).
``kv_transfer_s`` prices moving a request's KV cache between prefill and decode engines.
"""

from gpuplane.serving.steptime.breakdown import OperatorTotal, StepBreakdown
from gpuplane.serving.steptime.calibration import (
    Calibration,
    GpuCalibration,
    default_calibration,
    load_calibration,
)
from gpuplane.serving.steptime.interconnect import Interconnect
from gpuplane.serving.steptime.kv_transfer import KvLink, kv_transfer_bytes, kv_transfer_s
from gpuplane.serving.steptime.model import RooflineStepTime, peak_flops

__all__ = [
    "Calibration",
    "GpuCalibration",
    "Interconnect",
    "KvLink",
    "OperatorTotal",
    "RooflineStepTime",
    "StepBreakdown",
    "default_calibration",
    "kv_transfer_bytes",
    "kv_transfer_s",
    "load_calibration",
    "peak_flops",
]
