from __future__ import annotations

from typing import Any

import numpy as np

from gpuplane.scheduler.openb.trace import load_pods
from gpuplane.scheduler.openb.workload import make_workload, tune_demand
from tests.unit.scheduler.openb_factories import DATA, make_pod_table

DEFAULT = load_pods(DATA / "openb_pod_list_default.csv")
TARGET = 1.3 * 6212 * 1000


def test_same_seed_same_workload_other_seed_differs() -> None:
    a = make_workload(DEFAULT, 1213, 6212, 42)
    b = make_workload(DEFAULT, 1213, 6212, 42)
    c = make_workload(DEFAULT, 1213, 6212, 43)
    assert np.array_equal(a.arrivals, b.arrivals) and np.array_equal(a.node_rank, b.node_rank)
    assert not np.array_equal(a.arrivals, c.arrivals)
    assert not np.array_equal(a.node_rank, c.node_rank)


def test_default_trace_is_shuffled_then_resampled_up_to_the_target() -> None:
    w = make_workload(DEFAULT, 1213, 6212, 42)
    original = w.arrivals[: DEFAULT.num_pods]
    # Every original pod once, in a shuffled order; the copies come after them.
    assert sorted(original.tolist()) == list(range(DEFAULT.num_pods))
    assert not np.array_equal(original, np.arange(DEFAULT.num_pods))
    demand = int(DEFAULT.total_gpu_milli[w.arrivals].sum())
    assert demand <= TARGET
    assert sorted(w.node_rank.tolist()) == list(range(1213))


def test_tune_up_stops_at_the_first_overshoot_by_per_gpu_milli() -> None:
    # One 8-GPU pod (per-GPU milli 1000) and one share pod; demand 8500 vs target 10000.
    pods = make_pod_table([(1000, 8, 1000), (1000, 1, 500)])

    class Draws:
        def __init__(self, values: list[int]) -> None:
            self.values = values

        def integers(self, high: int) -> int:
            return self.values.pop(0)

    # +500 -> 9000, then the 8-GPU pod is checked with 1000 (fits: 10000) and adds 8000.
    # Any: a scripted stand-in for the numpy Generator; tune_demand only calls integers().
    rng: Any = Draws([1, 0, 1])
    arrivals = tune_demand([0, 1], pods, 10_000.0, rng)
    assert arrivals == [0, 1, 1, 0]


def test_tune_down_deletes_until_at_or_below_target() -> None:
    pods = make_pod_table([(1000, 1, 1000)] * 10)
    rng = np.random.default_rng(0)
    arrivals = tune_demand(list(range(10)), pods, 6500.0, rng)
    assert len(arrivals) == 6
    assert arrivals == sorted(arrivals)  # deletion keeps the order of the rest


def test_no_tuning_when_ratio_is_zero() -> None:
    w = make_workload(DEFAULT, 1213, 6212, 7, tune_ratio=0.0)
    assert w.arrivals.shape[0] == DEFAULT.num_pods
