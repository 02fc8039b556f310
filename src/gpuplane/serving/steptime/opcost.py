"""The roofline time of one kernel, with calibrated efficiencies.

A kernel needs ``flops / (peak x mfu)`` seconds of arithmetic and ``bytes / (hbm x bw_eff)``
seconds of memory traffic. The pure roofline takes the larger of the two. Real kernels overlap
the two imperfectly near the ridge point (a GEMM with a few hundred tokens is slower than both
bounds), so the calibrated model combines them as a p-norm, ``(c^p + m^p)^(1/p)``: p -> infinity
is the hard maximum, p = 1 their sum; ``sharpness`` is p, fitted per operator (None: hard max).
Every kernel also pays a fixed time (launch, ramp-up, tail) regardless of size. For GEMMs it adds
to the roofline time; for small memory-bound kernels (norms, rotary, activation) it overlaps with
the transfer, so there the two combine as a second p-norm (``fixed_sharpness``; None: added).
Attention prefill has two arithmetic parts with different efficiencies: queries against cached
context (a full rectangle of pairs) and queries against their own chunk (a causal triangle).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuplane.serving.steptime.operators import Work

Value = float | npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class OpParams:
    """Efficiencies of one operator class on one GPU family (fractions of the catalog peaks)."""

    mfu: float = 1.0
    bw_eff: float = 1.0
    fixed_s: float = 0.0
    sharpness: float | None = None
    mfu_causal: float | None = None
    fixed_sharpness: float | None = None

    def to_dict(self) -> dict[str, float | None]:
        return {
            "mfu": self.mfu,
            "bw_eff": self.bw_eff,
            "fixed_us": self.fixed_s * 1e6,
            "sharpness": self.sharpness,
            "mfu_causal": self.mfu_causal,
            "fixed_sharpness": self.fixed_sharpness,
        }

    @classmethod
    def from_dict(cls, data: dict[str, float | None]) -> OpParams:
        def optional(key: str) -> float | None:
            value = data.get(key)
            return None if value is None else float(value)

        return cls(
            mfu=float(data.get("mfu") or 1.0),
            bw_eff=float(data.get("bw_eff") or 1.0),
            fixed_s=float(data.get("fixed_us") or 0.0) * 1e-6,
            sharpness=optional("sharpness"),
            mfu_causal=optional("mfu_causal"),
            fixed_sharpness=optional("fixed_sharpness"),
        )


PURE_ROOFLINE = OpParams()
"""No calibration: peak FLOP/s, peak bandwidth, hard maximum, no fixed cost."""


@dataclass(frozen=True, slots=True)
class OpTime:
    """One kernel's time: its two roofline bounds, the combined roofline time (``core_s``) and the
    total with the fixed cost (seconds); ``total_s - core_s`` is the fixed cost's share."""

    compute_s: Value
    memory_s: Value
    core_s: Value
    total_s: Value


def combine(compute: Value, memory: Value, sharpness: float | None) -> Value:
    """The hard maximum (``sharpness`` None) or the p-norm of two non-negative times."""
    if isinstance(compute, np.ndarray) or isinstance(memory, np.ndarray):
        top = np.maximum(compute, memory)
        if sharpness is None:
            return top
        scale = np.maximum(top, 1e-30)
        norm = ((compute / scale) ** sharpness + (memory / scale) ** sharpness) ** (1 / sharpness)
        return np.asarray(scale * norm)
    c, m = float(compute), float(memory)
    peak = max(c, m)
    if sharpness is None or peak <= 0:
        return peak
    total = float((c / peak) ** sharpness + (m / peak) ** sharpness)
    return peak * float(total ** (1 / sharpness))


def op_time(params: OpParams, work: Work, peak_flops: float, hbm_bps: float) -> OpTime:
    """Time of one kernel doing ``work`` on a GPU with these peaks."""
    compute = work.flops / (peak_flops * params.mfu)
    causal_mfu = params.mfu_causal if params.mfu_causal is not None else params.mfu
    if not (isinstance(work.causal_flops, float) and work.causal_flops == 0.0):
        compute = compute + work.causal_flops / (peak_flops * causal_mfu)
    memory = work.bytes / (hbm_bps * params.bw_eff)
    core = combine(compute, memory, params.sharpness)
    if params.fixed_sharpness is None:
        total = core + params.fixed_s
    else:
        total = combine(core, params.fixed_s, params.fixed_sharpness)
    return OpTime(compute, memory, core, total)
