"""A priced step as plain data (what ``gpuplane serving step --json`` prints), times in ms."""

from __future__ import annotations

from typing import Any

from gpuplane.serving.batch import BatchShape
from gpuplane.serving.steptime.breakdown import StepBreakdown
from gpuplane.serving.steptime.model import RooflineStepTime


def step_report(
    engine: RooflineStepTime, batch: BatchShape, breakdown: StepBreakdown
) -> dict[str, Any]:
    st = breakdown.step_time()
    cal, link = engine.cal, engine.interconnect
    return {
        "model": engine.model.name,
        "gpu": engine.gpu.name,
        "tp": engine.tp,
        "dtype": engine.dtype,
        "tokens": batch.num_tokens,
        "prefills": [[p.new_tokens, p.context_tokens] for p in batch.prefills],
        "decode_contexts": list(batch.decode_contexts),
        "step_ms": st.total_s * 1e3,
        "compute_ms": st.compute_s * 1e3,
        "memory_ms": st.memory_s * 1e3,
        "communication_ms": st.communication_s * 1e3,
        "overhead_ms": st.overhead_s * 1e3,
        "cpu_overhead_ms": breakdown.cpu_overhead_s * 1e3,
        "bottleneck": breakdown.bottleneck,
        "per_operator": {
            name: {
                "ms": o.total_s * 1e3,
                "count": o.count,
                "bound": o.bound,
                "compute_ms": o.compute_s * 1e3,
                "memory_ms": o.memory_s * 1e3,
                "communication_ms": o.communication_s * 1e3,
                "fixed_ms": o.fixed_s * 1e3,
                "extrapolated": o.extrapolated,
            }
            for name, o in sorted(breakdown.operators.items(), key=lambda kv: -kv[1].total_s)
        },
        "interconnect": {
            "num_gpus": link.num_gpus,
            "bottleneck_gbps": link.bottleneck_gbps,
            "link_kind": link.link_kind,
            "description": link.description,
        },
        "calibration": {
            "family": cal.family.family,
            "measured_gpu": cal.family.gpu,
            "extrapolated": cal.extrapolated,
            "borrowed": cal.family.borrowed,
        },
    }
