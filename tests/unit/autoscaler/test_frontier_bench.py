"""bench/autoscale_frontier.py: the grid, the ScaledObject variants, the frontier arithmetic."""

from __future__ import annotations

from typing import Any

import pytest
from bench import autoscale as ab
from bench import autoscale_frontier as fb

from gpuplane.k8s.scenario_loader import load_scenario_spec
from gpuplane.serving.traffic.azure import load_azure_trace


def row(gpu: float, att: float, family: str = "slo") -> dict[str, Any]:
    point = {"trace": "conv", "cold": "60s", "family": family, "knobs": []}
    return {"gpu_hours": gpu, "attainment": att, "windows_met": att, "point": point}


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


def test_the_grid_is_deterministic_and_its_keys_unique() -> None:
    pairs = [("conv", "60s"), ("code", "210s")]
    a, b = fb.grid(15.0, pairs), fb.grid(15.0, pairs)
    assert a == b
    assert len({p.key for p in a}) == len(a)
    assert {p.family for p in a} == set(fb.FAMILIES)


def test_keda_variants_are_valid_scaled_objects() -> None:
    base = load_scenario_spec(ab.EXAMPLES / "scenario.yaml").spec
    (so,) = base.scaled_objects
    ttft = fb.keda_object(so, "keda-ttft", {"ttft_s": 1.0})
    (trigger,) = ttft.spec.triggers
    assert "time_to_first_token_seconds_bucket" in trigger.metadata["query"]
    assert 'model_name="qwen-72b"' in trigger.metadata["query"]
    assert trigger.metadata["threshold"] == "1"
    queue = fb.keda_object(so, "keda-queue", {"queue": 10})
    assert [t.metadata["threshold"] for t in queue.spec.triggers] == ["10"]
    both = fb.keda_object(so, "keda", {"kv": 0.5, "up_policy": "2 pods/60s", "polling_s": 30})
    assert [t.metadata["threshold"] for t in both.spec.triggers] == ["5", "0.50"]
    assert both.spec.pollingInterval == 30
    behavior = both.spec.advanced.horizontalPodAutoscalerConfig.behavior  # type: ignore[union-attr]
    assert behavior is not None and behavior.scaleUp is not None
    assert behavior.scaleUp.policies is not None
    assert behavior.scaleUp.policies[0].type == "Pods"


def test_slo_knobs_are_validated_like_settings() -> None:
    trace = load_azure_trace(ab.TRACE_DIR / ab.TRACES["conv"][0])
    point = fb.Point("conv", "60s", "slo", (("target_margin", 0.7),), 15.0)
    spec, _ = fb.point_spec(point, trace)
    assert spec.serving is not None
    assert spec.serving.slo_scalers[0].settings.target_margin == 0.7
    bad = fb.Point("conv", "60s", "slo", (("target_margin", 1.5),), 15.0)
    with pytest.raises(ValueError, match="target_margin"):
        fb.point_spec(bad, trace)


def test_a_short_point_runs_and_reports_its_figures() -> None:
    point = fb.Point("code", "60s", "oracle", (("target_margin", 1.0),), 0.5)
    out, again = fb.run_point(point), fb.run_point(point)
    del out["wall_s"], again["wall_s"]  # the only figure that is not the point's
    assert out == again
    assert out["gpu_hours"] > 0 and 0.0 <= out["attainment"] <= 1.0
    assert out["arrived"] > 0
