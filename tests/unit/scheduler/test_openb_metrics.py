from __future__ import annotations

import math

import numpy as np

from gpuplane.scheduler.openb.metrics import (
    arrived_pct,
    discretize,
    rounded_pct,
    unallocated_curve,
    value_at,
)


def test_arrived_rounds_half_to_even() -> None:
    # 100 GPUs: 0.5 % = 500 milli -> 0, 1.5 % -> 2, 2.5 % -> 2.
    got = arrived_pct(np.array([500, 1500, 2500, 2501]), 100)
    assert got.tolist() == [0.0, 2.0, 2.0, 3.0]


def test_allocation_rounds_to_two_decimals_like_python() -> None:
    # 26.75 / 1 / 10 is stored just below 2.675: Python's round gives 2.67, np.round 2.68.
    got = rounded_pct(np.array([26.75]), 1)
    assert got.tolist() == [2.67]
    assert float(np.round(26.75 / 10, 2)) == 2.68


def test_discretize_mean_and_fallback_window() -> None:
    arrived = np.array([0.0, 0.0, 2.0, 5.0])
    value = np.array([1.0, 2.0, 4.0, 7.0])
    curve = discretize(arrived, value, max_x=8)
    assert curve[0] == 1.5  # mean of the two events at 0
    assert curve[1] == round((1.0 + 2.0 + 4.0) / 3, 2)  # none at 1: events in [0, 2]
    assert curve[2] == 4.0
    assert curve[3] == 4.0  # none at 3: events in [2, 4]
    assert curve[4] == 7.0 and curve[6] == 7.0
    assert math.isnan(curve[8])
    assert value_at(curve, 8) is None and value_at(curve, 2) == 4.0


def test_unallocated_curve_is_100_minus_allocation_while_all_fits() -> None:
    total_gpus = 10
    arrived = np.arange(1, 11) * 1000  # one whole GPU per event
    used = arrived.copy()
    used[-1] = used[-2]  # the last pod failed
    curve = unallocated_curve(arrived, used, total_gpus)
    assert curve[50] == 50.0
    assert curve[100] == 10.0
