"""The seed's KEDA ScaledObject, unchanged, scaling the seed's vLLM Deployment in the twin."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.autoscaler.keda import prometheus_scaler
from gpuplane.k8s.scenario.loader import load_scenario_spec
from gpuplane.twin.build import simulation_from_spec

EXAMPLE = Path(__file__).resolve().parents[2] / "examples/autoscaling/scenario.yaml"


def test_keda_scales_the_seed_deployment_on_queue_and_kv() -> None:
    spec = load_scenario_spec(EXAMPLE).spec
    assert len(spec.scaled_objects) == 1
    sim = simulation_from_spec(spec, seed=0, check_invariants=False)
    result = sim.run(1800.0)
    assert result.summary.autoscaling is not None
    (auto,) = result.summary.autoscaling.scaled_objects
    assert auto.target == "llm/vllm-qwen-72b-instruct"
    # The queue builds while the first engines load: the HPA doubles per 15 s up to max 16.
    assert auto.max_replicas_seen == 16
    assert auto.scale_events >= 3
    events = [e for e in result.events if e.reason == "ScalingReplicaSet"]
    ups = [e for e in events if "Scaled up" in e.message and "external metric" in e.message]
    assert ups, "scale-ups come from the HPA's External metrics (KEDA's Prometheus triggers)"
    downs = [e for e in events if "Scaled down" in e.message]
    # Scale-down waits for the 300 s stabilisation window after the last high recommendation.
    if downs:
        first_up = min(e.t_s for e in ups)
        assert min(e.t_s for e in downs) >= first_up + 300
    # Never below minReplicaCount 2.
    assert all(int(e.message.split(" to ")[1].split()[0]) >= 2 for e in events)
    assert result.summary.serving is not None
    (svc,) = result.summary.serving.services
    req = svc.requests
    assert req.arrived == req.completed + req.rejected + req.aborted + req.in_flight


def test_promql_series_exist_for_the_triggers() -> None:
    spec = load_scenario_spec(EXAMPLE).spec
    sim = simulation_from_spec(spec, seed=0)
    sim.run(300.0)
    store = sim.cluster.tsdb
    series = list(store.series("vllm:kv_cache_usage_perc"))
    assert series and all(dict(s.labels)["model_name"] == "qwen-72b" for s in series)


def test_a_query_that_fails_to_evaluate_does_not_stop_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Any exception inside the evaluation (here a stand-in for a future evaluator bug) is the
    # trigger's error: KEDA and the HPA hold the replicas, and the run goes on to its end.
    def boom(*args: object, **kwargs: object) -> None:
        raise OverflowError("math range error")

    monkeypatch.setattr(prometheus_scaler, "evaluate", boom)
    spec = load_scenario_spec(EXAMPLE).spec
    sim = simulation_from_spec(spec, seed=0, check_invariants=False)
    result = sim.run(240.0)
    assert result.summary.autoscaling is not None
    (auto,) = result.summary.autoscaling.scaled_objects
    assert auto.scale_events == 0 and auto.replicas_at_end == 2
