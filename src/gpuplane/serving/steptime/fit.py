"""Least-squares fitting of the roofline's efficiencies to measured kernel times.

The residual is ``log(predicted) - log(measured)``, so every point weighs by its relative error
(a 5 us kernel counts as much as a 5 ms one) and the fit minimises what MAPE reports. The solver is
Levenberg-Marquardt with a finite-difference Jacobian over a handful of parameters, each mapped to
its valid range: efficiencies through a logistic onto (0, 1], fixed times through exp onto
(0, inf), the p-norm sharpness onto (1, inf). Deterministic: same data, same result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuplane.serving.steptime.allreduce import allreduce_s
from gpuplane.serving.steptime.calibration import CollectiveParams, ErrorStats
from gpuplane.serving.steptime.opcost import PURE_ROOFLINE, OpParams, op_time
from gpuplane.serving.steptime.operators import Work

Array = npt.NDArray[np.float64]
MAX_ITERATIONS = 200


def _logistic(x: float) -> float:
    return float(1.0 / (1.0 + np.exp(-min(max(x, -30.0), 30.0))))


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return float(np.log(p / (1 - p)))


@dataclass(frozen=True, slots=True)
class Param:
    """One free parameter: its name, its kind of range and its starting value."""

    name: str
    kind: str  # "fraction" | "positive" | "sharpness"
    start: float

    def to_internal(self, value: float) -> float:
        if self.kind == "fraction":
            return _logit(value)
        if self.kind == "sharpness":
            return float(np.log(value - 1.0))
        return float(np.log(value))

    def to_value(self, x: float) -> float:
        if self.kind == "fraction":
            return _logistic(x)
        if self.kind == "sharpness":
            return 1.0 + float(np.exp(min(max(x, -30.0), 30.0)))
        return float(np.exp(min(max(x, -60.0), 30.0)))


def levenberg_marquardt(predict: Callable[[Array], Array], theta0: Array, measured: Array) -> Array:
    """Minimise ``sum((log predict(theta) - log measured)^2)`` from ``theta0``."""
    log_y = np.log(measured)

    def residual(theta: Array) -> Array:
        pred = np.maximum(predict(theta), 1e-30)
        return np.log(pred) - log_y

    theta = theta0.astype(np.float64)
    r = residual(theta)
    cost = float(r @ r)
    damping = 1e-2
    for _ in range(MAX_ITERATIONS):
        jac = np.empty((r.size, theta.size))
        for i in range(theta.size):
            step = np.zeros_like(theta)
            step[i] = 1e-6
            jac[:, i] = (residual(theta + step) - r) / 1e-6
        normal, grad = jac.T @ jac, jac.T @ r
        improved = False
        while damping < 1e10:
            delta = np.linalg.solve(normal + damping * np.diag(np.diag(normal) + 1e-12), -grad)
            cand = theta + delta
            r_cand = residual(cand)
            cost_cand = float(r_cand @ r_cand)
            if cost_cand < cost:
                improved = cost - cost_cand > 1e-12 * max(cost, 1e-30)
                theta, r, cost = cand, r_cand, cost_cand
                damping = max(damping / 3, 1e-12)
                break
            damping *= 4
        if not improved:
            break
    return theta


def fit_op_params(
    works: Work,
    measured: Array,
    peak_flops: float,
    hbm_bps: float,
    free: Sequence[Param],
    fixed: OpParams = PURE_ROOFLINE,
) -> OpParams:
    """The ``OpParams`` (``free`` ones fitted, others as in ``fixed``) that best explain
    ``measured``."""

    def params_of(theta: Array) -> OpParams:
        values = {p.name: p.to_value(float(x)) for p, x in zip(free, theta, strict=True)}
        return OpParams(
            mfu=values.get("mfu", fixed.mfu),
            bw_eff=values.get("bw_eff", fixed.bw_eff),
            fixed_s=values.get("fixed_s", fixed.fixed_s),
            sharpness=values.get("sharpness", fixed.sharpness),
            mfu_causal=values.get("mfu_causal", fixed.mfu_causal),
            fixed_sharpness=values.get("fixed_sharpness", fixed.fixed_sharpness),
        )

    def predict(theta: Array) -> Array:
        return np.asarray(op_time(params_of(theta), works, peak_flops, hbm_bps).total_s)

    theta0 = np.array([p.to_internal(p.start) for p in free])
    return params_of(levenberg_marquardt(predict, theta0, measured))


def fit_collective(
    num_gpus: Array, bottleneck_gbps: Array, size_bytes: Array, measured: Array
) -> CollectiveParams:
    """Bandwidth efficiency and latency of ring all-reduces over one link kind."""
    several_sizes = len(np.unique(num_gpus)) > 1
    free = [Param("bw_eff", "fraction", 0.6), Param("latency_s", "positive", 1e-5)]
    if several_sizes:
        free.append(Param("hop_latency_s", "positive", 1e-6))

    def params_of(theta: Array) -> CollectiveParams:
        values = {p.name: p.to_value(float(x)) for p, x in zip(free, theta, strict=True)}
        return CollectiveParams(
            values["bw_eff"], values["latency_s"], values.get("hop_latency_s", 0.0)
        )

    def predict(theta: Array) -> Array:
        return np.asarray(allreduce_s(params_of(theta), num_gpus, bottleneck_gbps, size_bytes))

    theta0 = np.array([p.to_internal(p.start) for p in free])
    return params_of(levenberg_marquardt(predict, theta0, measured))


def fit_linear_nonnegative(x: Array, y: Array) -> tuple[float, float]:
    """(intercept, slope) of ``y = a + b x`` by least squares, both clipped at 0."""
    design = np.column_stack([np.ones_like(x), x])
    solution, *_ = np.linalg.lstsq(design, y, rcond=None)
    a, b = float(solution[0]), float(solution[1])
    if b < 0:
        return max(float(np.mean(y)), 0.0), 0.0
    if a < 0:
        return 0.0, max(float(x @ y) / float(x @ x), 0.0)
    return a, b


def error_stats(predicted: Array, measured: Array) -> ErrorStats:
    """MAPE and 90th-percentile absolute percentage error."""
    err = np.abs(np.asarray(predicted) / measured - 1.0) * 100.0
    return ErrorStats(int(err.size), float(err.mean()), float(np.percentile(err, 90)))
