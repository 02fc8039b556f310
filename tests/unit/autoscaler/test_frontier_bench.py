"""bench/autoscale_frontier.py: the sweep file it runs, families and views, the frontier
arithmetic."""

from __future__ import annotations

from typing import Any

import pytest

from bench import autoscale_frontier as fb
from gpuplane.sweep import load_sweep
from gpuplane.sweep.bases.registry import bases


def row(gpu: float, att: float, config: str = "slo") -> dict[str, Any]:
    record = {"trace": "conv", "cold_start": "60s", "config": config}
    return {**fb.as_row(record), "gpu_hours": gpu, "attainment": att, "windows_met": att}


def test_the_frontier_keeps_only_undominated_points() -> None:
    rows = [row(10, 0.90), row(12, 0.89), row(12, 0.96), row(15, 0.96), row(20, 0.995)]
    front = fb.frontier(rows, "attainment")
    assert [(r["gpu_hours"], r["attainment"]) for r in front] == [
        (10, 0.90),
        (12, 0.96),
        (20, 0.995),
    ]


def test_gpu_hours_at_a_level_interpolate_along_the_frontier() -> None:
    front = fb.frontier([row(10, 0.90), row(12, 0.96), row(20, 0.995)], "attainment")
    assert fb.gpu_hours_at(front, "attainment", 0.93) == pytest.approx(11.0)
    assert fb.gpu_hours_at(front, "attainment", 0.96) == pytest.approx(12.0)
    assert fb.gpu_hours_at(front, "attainment", 0.85) == 10  # every point is above: cheapest
    assert fb.gpu_hours_at(front, "attainment", 0.999) is None  # not reached


def test_families_and_views() -> None:
    rows = [
        row(10, 0.9, "slo"),
        row(9, 0.9, "slo:objective=per_request,target_margin=0.8"),
        row(8, 0.9, "keda:queue=2"),
    ]
    assert rows[1]["point"]["family"] == "slo" and rows[1]["knobs"].startswith("objective")
    assert [r["gpu_hours"] for r in fb.members(rows, "slo")] == [10, 9]
    assert [r["gpu_hours"] for r in fb.members(rows, "slo:per_request")] == [9]
    assert [r["gpu_hours"] for r in fb.members(rows, "slo:percentile")] == [10]
    assert fb.members(rows, "keda")[0]["knobs"] == "queue=2"
    text = fb.markdown(rows)
    assert "| conv, 60s | per request | slo | 9.00 | not reached | not reached |" in text


def test_the_sweep_file_covers_every_family_on_both_traces_and_cold_starts() -> None:
    sweep = load_sweep(fb.SWEEP, bases())
    configs = {str(p.value("config")) for p in sweep.points}
    # The oracle-signals scaler is drawn from the issue-25 SLO sweep's merge, not run here.
    assert {fb.as_row(point(c))["point"]["family"] for c in configs} == set(fb.FAMILIES) - {
        "slo-oracle-signals"
    }
    pairs = {(p.value("trace"), p.value("cold_start")) for p in sweep.points}
    assert pairs == {("conv", "60s"), ("conv", "210s"), ("code", "60s"), ("code", "210s")}
    assert len(sweep.points) == 4 * len(configs)
    assert {"gpu_hours", "attainment", "windows_met"} <= set(sweep.figures)


def point(config: str) -> dict[str, object]:
    return {"trace": "conv", "cold_start": "60s", "config": config}


def test_oracle_signals_are_a_family_of_their_own() -> None:
    r = fb.as_row(point("slo:objective=per_request,signals=oracle"))
    assert (r["point"]["family"], r["knobs"]) == ("slo-oracle-signals", "objective=per_request")
    assert fb.as_row(point("slo:signals=oracle"))["knobs"] == "default"
    assert fb.as_row(point("slo:objective=per_request"))["point"]["family"] == "slo"


def test_a_level_is_reached_by_the_cheapest_mixture_of_two_points() -> None:
    # (0.917, 40) lies above the line from (0.91, 24) to (0.954, 42): time-sharing those two
    # reaches 0.95 for less than any mixture with (0.917, 40).
    front = fb.frontier([row(24, 0.91), row(40, 0.917), row(42, 0.954)], "attainment")
    assert len(front) == 3
    expected = 24 + (0.95 - 0.91) / (0.954 - 0.91) * (42 - 24)
    assert fb.gpu_hours_at(front, "attainment", 0.95) == pytest.approx(expected)
    assert expected < 40 + (0.95 - 0.917) / (0.954 - 0.917) * 2
