"""Run time of a workload's pods: sampled when the pod is created, from the workload's spec."""

from __future__ import annotations

import numpy as np

from gpuplane.twin.scenario.spec import (
    Duration,
    ExponentialDuration,
    FixedDuration,
    UntilEnd,
    Workload,
)


def sample_run_s(duration: Duration, rng: np.random.Generator) -> float | None:
    if isinstance(duration, FixedDuration):
        return duration.seconds
    if isinstance(duration, ExponentialDuration):
        return float(rng.exponential(duration.mean_s))
    assert isinstance(duration, UntilEnd)
    return None


def sample_pod_fate(
    workload: Workload | None, rng: np.random.Generator, override_s: float | None = None
) -> tuple[float | None, bool]:
    """(run time or None for until-the-end, whether the main container will exit non-zero)."""
    if workload is None:
        return override_s, False
    run_s = override_s if override_s is not None else sample_run_s(workload.duration, rng)
    fails = bool(workload.failure_probability > 0 and rng.random() < workload.failure_probability)
    return run_s, fails
