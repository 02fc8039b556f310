"""The metric an external scaler returns so that the HPA KEDA builds lands on a replica count.

gpuplane's SLO scaler decides a replica count ``N``; KEDA only forwards a metric value and a
target to an HPA, which turns them into replicas with its own arithmetic. With the trigger's
``metricType: AverageValue`` (KEDA's default for external triggers) the HPA runs
``GetExternalPerPodMetricReplicas`` (kubernetes ``replica_calculator.go``) against
``S = status.replicas`` of the scale target (every pod, ready or not)::

    ratio = value / (target × S)
    within [1 − tolerance_down, 1 + tolerance_up] (inclusive)  →  S    (no change)
    otherwise                                                  →  ceil(value / target)

The scaler answers ``target = 1`` and ``value`` in ``(N − 1, N]``, so ``ceil(value / target)`` is
``N`` whatever ``S`` is. Which value inside that interval decides what the tolerance swallows:

- ``N ≥ S``: ``value = N`` (the top: ``ratio = N/S``, as far above 1 as the interval allows);
- ``N < S``: ``value = N − 0.5`` (near the bottom: ``ratio = (N − 0.5)/S``). Not ``N − 1 + ε``:
  KEDA turns the float into a milli-unit Quantity, and a value one milli above ``N − 1`` may
  be truncated onto ``N − 1``; half a unit survives truncation and rounding alike.

Both land on ``N`` when ``S`` is what the scaler saw, and when the HPA's ``S`` differs they
still land on ``N`` or keep ``S`` (never a third count), because the ceiling does not depend on
``S``. ``N = S`` gives ``ratio`` within tolerance (or exactly 1): no change, as wanted.

What the default tolerance (0.1) cannot do: a step whose ratio stays inside ``[0.9, 1.1]``.
Up, ``N/S ≤ 1.1``: from ``S ≥ 10`` one more replica is ignored (10 → 11). Down,
``(N − 0.5)/S ≥ 0.9``: from ``S ≥ 6`` one fewer is ignored (6 → 5 gives 4.5/6 = 0.75, but
20 → 19 gives 0.925). :func:`hpa_reaches` says which. No value fixes this — the interval
``(N − 1, N]`` is the only one whose ceiling is ``N``, and it lies inside the band — so a
ScaledObject driven by this scaler sets ``behavior.scaleUp.tolerance`` and
``behavior.scaleDown.tolerance`` to 0 (``advanced.horizontalPodAutoscalerConfig``; the HPA
honours them with the ``HPAConfigurableTolerance`` gate, on by default from Kubernetes 1.35).
With tolerance 0 the HPA lands on ``N`` from every ``S`` (the ratio is exactly 1 only at
``N = S``). ``tests/unit/autoscaler/test_keda_replica_metric.py`` checks all of this against
``autoscaler.hpa``'s own arithmetic for ``N, S`` in 1..100.

With ``metricType: Value`` the HPA multiplies by its count of *ready* pods instead, which the
scaler cannot know exactly; it is not supported (the trigger's ``metricType`` is not in the
metadata KEDA sends, so the scaler cannot refuse it: docs/live.md says so).
"""

from __future__ import annotations

import math

from gpuplane.autoscaler.hpa.replica_calculator import Tolerances

TARGET_AVERAGE_VALUE = 1.0
"""The ``targetSize``/``targetSizeFloat`` the scaler's ``GetMetricSpec`` answers."""


def metric_for(desired: int, current: int) -> float:
    """The metric value that makes the HPA propose ``desired`` from ``current`` replicas.

    ``desired`` 0 is 0: the HPA never goes below ``minReplicas`` (at least 1); scaling to zero
    is KEDA's, through ``IsActive``.
    """
    if desired < 0 or current < 0:
        raise ValueError("replica counts must be >= 0")
    if desired == 0:
        return 0.0
    return float(desired) if desired >= current else desired - 0.5


def hpa_reaches(desired: int, current: int, tolerances: Tolerances) -> bool:
    """Whether the HPA, at ``current`` status replicas, proposes exactly ``desired`` from
    :func:`metric_for`'s value (before its min/max, stabilization and rate limits)."""
    if desired < 1 or current < 1:
        return desired == current or current == 0
    if desired == current:
        return True
    value = metric_for(desired, current)
    ratio = value / (TARGET_AVERAGE_VALUE * current)
    return not tolerances.is_within(ratio) and math.ceil(value / TARGET_AVERAGE_VALUE) == desired
