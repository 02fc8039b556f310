"""Scale to zero and back with KEDA: a router-side trigger activates the target, the cold start
delays service, the cooldown returns it to zero."""

from __future__ import annotations

from pathlib import Path

from gpuplane.k8s.scenario.loader import load_scenario_spec
from gpuplane.twin.build import simulation_from_spec

SCENARIO = """\
name: zero
node_pools:
  - {name: h100, preset: dgx-h100, count: 1}
workloads:
  - {name: llm, path: llm.yaml}
serving:
  cold_start: {image_pull: 30s, storage_gbps: 4, init: 30s}
  services:
    - name: chat
      namespace: ml
      deployment: llm
      traffic: {poisson: {rate_per_s: 2, prompt_tokens: 500, output_tokens: 100, start: 300s,
                          duration: 600s}}
autoscaling: [so.yaml]
"""
LLM = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm, namespace: ml}
spec:
  replicas: 0
  selector: {matchLabels: {app: llm}}
  template:
    metadata: {labels: {app: llm}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]
        resources:
          limits: {nvidia.com/gpu: 1}
"""
SO = """\
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: llm, namespace: ml}
spec:
  scaleTargetRef: {name: llm}
  minReplicaCount: 0
  maxReplicaCount: 3
  pollingInterval: 5
  cooldownPeriod: 120
  triggers:
  - type: prometheus
    metadata:
      serverAddress: http://prometheus:9090
      query: sum(rate(vllm:num_incoming_requests_total{service="chat"}[1m]))
      threshold: "5"
      activationThreshold: "0"
"""


def test_scale_from_zero_serves_after_cold_start_and_returns_to_zero(tmp_path: Path) -> None:
    for name, text in (("scenario.yaml", SCENARIO), ("llm.yaml", LLM), ("so.yaml", SO)):
        (tmp_path / name).write_text(text)
    spec = load_scenario_spec(tmp_path / "scenario.yaml").spec
    sim = simulation_from_spec(spec, seed=0, check_invariants=True)
    result = sim.run(1500.0)
    events = [e for e in result.events if e.reason == "ScalingReplicaSet"]
    up = [e for e in events if "from 0 to 1" in e.message]
    down = [e for e in events if e.message.split(" to ")[-1].startswith("0")]
    assert up and up[0].t_s >= 300.0  # nothing before traffic
    assert down and down[-1].t_s >= 900.0 + 120.0  # cooldown after the last request
    assert result.summary.serving is not None
    (svc,) = result.summary.serving.services
    req = svc.requests
    assert req.completed > 0.9 * req.arrived
    # Requests that arrived while the engine loaded waited for it: TTFT p99 covers the cold start.
    ttft_p99 = svc.latency_s.ttft_p99_s
    assert ttft_p99 is not None and ttft_p99 > 30.0
    state = sim.cluster.store.deployments["ml/llm"]
    assert state.replicas == 0
