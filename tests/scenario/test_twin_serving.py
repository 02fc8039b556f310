"""LLM serving in the twin: engines follow pods, requests are conserved, metrics are queryable."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.autoscaler.promql.evaluator import evaluate
from gpuplane.core.errors import InputError
from gpuplane.k8s.scenario.loader import load_scenario_spec
from gpuplane.twin.build import simulation_from_spec
from gpuplane.twin.serving.runtime import ServingRuntime
from gpuplane.twin.simulation import RunResult, Simulation

SCENARIO = """\
name: serve
node_pools:
  - {name: h100, preset: dgx-h100, count: 1}
workloads:
  - name: llm
    path: llm.yaml
serving:
  cold_start: {image_pull: 30s, storage_gbps: 4, init: 20s}
  services:
    - name: chat
      namespace: inference
      deployment: llm
      router: ROUTER
      traffic: {poisson: {rate_per_s: 3, prompt_tokens: 600, output_tokens: 150, start: 10s}}
"""
LLM = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm, namespace: inference}
spec:
  replicas: REPLICAS
  selector: {matchLabels: {app: llm}}
  template:
    metadata: {labels: {app: llm}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        args: ["--model", "MODEL", "--max-model-len", "8192", "--tensor-parallel-size", "TP"]
        resources:
          requests: {cpu: "8", memory: 32Gi}
          limits: {nvidia.com/gpu: TP, memory: 32Gi}
"""


def run(
    tmp: Path,
    *,
    until: float = 600.0,
    router: str = "llm-d",
    model: str = "meta-llama/Llama-3.1-8B-Instruct",
    tp: int = 1,
    replicas: int = 2,
    pool: str = "dgx-h100",
) -> tuple[Simulation, RunResult]:
    (tmp / "scenario.yaml").write_text(SCENARIO.replace("ROUTER", router).replace("dgx-h100", pool))
    text = LLM.replace("MODEL", model).replace("REPLICAS", str(replicas))
    (tmp / "llm.yaml").write_text(text.replace('"TP"', f'"{tp}"').replace("TP,", f"{tp},"))
    spec = load_scenario_spec(tmp / "scenario.yaml").spec
    sim = simulation_from_spec(spec, seed=0, check_invariants=True)
    return sim, sim.run(until)


def test_requests_are_conserved_and_latency_is_reported(tmp_path: Path) -> None:
    _, result = run(tmp_path)
    assert result.summary.serving is not None
    (svc,) = result.summary.serving.services
    req = svc.requests
    assert req.arrived > 1500
    assert req.arrived == req.completed + req.rejected + req.aborted + req.in_flight
    assert svc.engines_started == 2
    # Requests that arrived during the cold start waited; once engines are up TTFT is small.
    p50, p99 = svc.latency_s.ttft_p50_s, svc.latency_s.ttft_p99_s
    assert p50 is not None and p50 < 1.0
    assert p99 is not None and p99 > 5.0
    assert svc.slo_attainment is not None and 0.0 < svc.slo_attainment <= 1.0


def test_engine_metrics_are_in_the_series_store_with_pod_labels(tmp_path: Path) -> None:
    sim, _ = run(tmp_path)
    store = sim.cluster.tsdb
    assert "vllm:num_requests_running" in store
    assert "DCGM_FI_DEV_FB_USED" in store
    value = evaluate('sum(vllm:num_requests_running{namespace="inference"})', store, 590.0)
    assert value is not None
    rate = evaluate(
        'sum(rate(vllm:generation_tokens_total{namespace="inference"}[1m]))', store, 590.0
    )
    samples = getattr(rate, "samples", None) or getattr(rate, "series", None) or rate
    assert samples
    pods = {dict(s.labels).get("pod") for s in store.series("vllm:num_requests_waiting")}
    assert len(pods) == 2


def test_a_model_that_does_not_fit_crash_loops(tmp_path: Path) -> None:
    sim, result = run(
        tmp_path, model="meta-llama/Llama-3.1-70B-Instruct", tp=1, replicas=1, until=120.0
    )
    counters = result.summary.counters
    assert counters["engine_start_failures"] >= 2  # restarted with back-off, failing again
    pod = next(iter(sim.cluster.store.pods.values()))
    assert pod.restart_count >= 1
    assert result.summary.serving is not None
    (svc,) = result.summary.serving.services
    assert svc.requests.completed == 0


def test_unknown_deployment_is_located(tmp_path: Path) -> None:
    text = SCENARIO.replace("deployment: llm", "deployment: x").replace("ROUTER", "llm-d")
    (tmp_path / "scenario.yaml").write_text(text)
    (tmp_path / "llm.yaml").write_text(
        LLM.replace("MODEL", "meta-llama/Llama-3.1-8B-Instruct")
        .replace("REPLICAS", "1")
        .replace('"TP"', '"1"')
        .replace("TP,", "1,")
    )
    with pytest.raises(InputError) as info:
        load_scenario_spec(tmp_path / "scenario.yaml")
    assert str(info.value).startswith(f"{tmp_path / 'scenario.yaml'}:12: serving.services[0]")
    assert "no Deployment inference/x" in str(info.value)


PD_SCENARIO = """\
name: pd
node_pools:
  - {name: h100, preset: dgx-h100, count: 1}
workloads:
  - {name: prefill, path: prefill.yaml}
  - {name: decode, path: decode.yaml}
serving:
  cold_start: {image_pull: 10s, storage_gbps: 4, init: 10s}
  services:
    - name: chat
      namespace: inference
      deployment: decode
      prefill_deployment: prefill
      router: least-outstanding
      traffic: {poisson: {rate_per_s: 2, prompt_tokens: 2000, output_tokens: 100, start: 60s}}
"""


def test_prefill_decode_disaggregation_moves_requests_through_both_pools(tmp_path: Path) -> None:
    (tmp_path / "scenario.yaml").write_text(PD_SCENARIO)
    for name in ("prefill", "decode"):
        text = (
            LLM.replace("name: llm", f"name: {name}")
            .replace("app: llm", f"app: {name}")
            .replace("MODEL", "meta-llama/Llama-3.1-8B-Instruct")
            .replace("REPLICAS", "1")
            .replace('"TP"', '"1"')
            .replace("TP,", "1,")
        )
        (tmp_path / f"{name}.yaml").write_text(text)
    spec = load_scenario_spec(tmp_path / "scenario.yaml").spec
    sim = simulation_from_spec(spec, seed=0, check_invariants=True)
    result = sim.run(400.0)
    assert result.summary.serving is not None
    (svc,) = result.summary.serving.services
    assert svc.engines_started == 2
    req = svc.requests
    assert req.completed > 500
    assert req.arrived == req.completed + req.rejected + req.aborted + req.in_flight
    runtime = sim.component(ServingRuntime)
    outcomes = runtime.services["chat"].sim.result().completed()
    assert all(o.prefill_engine_id is not None for o in outcomes)
    assert all(o.prefill_engine_id != o.engine_id for o in outcomes)
