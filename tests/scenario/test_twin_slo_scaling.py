"""gpuplane's SLO-aware scaler in the twin: a capacity model that describes the engines, a
startup backlog that does not send the pool to its maximum, and a step in traffic followed
without flapping."""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from gpuplane.autoscaler.slo.analytic import AnalyticCapacity
from gpuplane.autoscaler.slo.capacity import (
    CapacityModel,
    Corrections,
    LoadMix,
    PoolRole,
    SloTargets,
    meets,
)
from gpuplane.k8s.scenario.loader import load_scenario_spec
from gpuplane.serving.batch import BatchShape, PrefillChunk
from gpuplane.serving.cold_start import ColdStart
from gpuplane.serving.engine_capacity import capacity_from_engine
from gpuplane.serving.memory.budget import plan_memory
from gpuplane.serving.memory.settings import VllmMemorySettings
from gpuplane.serving.models.catalog import resolve_model
from gpuplane.serving.routing.outcome import Status
from gpuplane.serving.steptime.interconnect import Interconnect
from gpuplane.serving.steptime.model import RooflineStepTime
from gpuplane.serving.traffic.trace import Trace
from gpuplane.topology.catalog import get_gpu_model
from gpuplane.topology.presets import load_preset
from gpuplane.twin.autoscaling.oracle_signals import PROMPT_QUANTILES, prompt_quantiles
from gpuplane.twin.autoscaling.slo import SloScaling
from gpuplane.twin.build import simulation_from_spec
from gpuplane.twin.controllers.deployment import DeploymentController
from gpuplane.twin.scenario.serving_spec import SignalSource
from gpuplane.twin.serving.runtime import ServingRuntime

EXAMPLE = Path(__file__).resolve().parents[2] / "examples/autoscaling/scenario-slo.yaml"


def test_capacity_fit_follows_the_step_time_model() -> None:
    """The example's engine: Qwen2.5-72B, TP=4 on an HGX H200's NVLink island."""
    shape, gpu = resolve_model("Qwen/Qwen2.5-72B-Instruct"), get_gpu_model("H200-141GB")
    settings = VllmMemorySettings(gpu_memory_utilization=0.9, max_num_seqs=256, max_model_len=16384)
    plan = plan_memory(shape, gpu, 4, settings)
    link = Interconnect.from_topology(load_preset("hgx-h200"), [0, 1, 2, 3])
    model = RooflineStepTime(shape, gpu, 4, interconnect=link)
    capacity = AnalyticCapacity.from_figures(capacity_from_engine(model, plan))
    assert capacity.max_num_batched_tokens == plan.max_num_batched_tokens
    assert capacity.kv_capacity_tokens == plan.num_gpu_blocks * plan.block_size
    assert capacity.max_num_seqs == 256
    assert capacity.prefill_s_per_token_squared > 0  # attention over the prompt
    decode = (1024,) * 32
    plain = model.step_time(BatchShape(decode_contexts=decode)).total_s
    for tokens in (512, 1024, 2048, 4096, plan.max_num_batched_tokens):
        stalled = BatchShape(prefills=(PrefillChunk(tokens, 0),), decode_contexts=decode)
        added = model.step_time(stalled).total_s - plain
        assert capacity.prefill_s(tokens) == pytest.approx(added, rel=0.05)
    # Linear in the batch and in its KV; the step model's batch of 256 is 6 % slower than that.
    for batch, context, within in ((1, 1024, 0.01), (32, 1024, 0.02), (128, 2048, 0.03)):
        step = model.step_time(BatchShape(decode_contexts=(context,) * batch)).total_s
        assert capacity.step_s(batch, LoadMix(context, 0.0)) == pytest.approx(step, rel=within)
    full = model.step_time(BatchShape(decode_contexts=(512,) * 256)).total_s
    assert capacity.step_s(256, LoadMix(512.0, 0.0)) == pytest.approx(full, rel=0.07)


def test_prompt_quantiles_come_from_the_recent_requests_only() -> None:
    arrivals = np.arange(0.0, 600.0, 1.0)
    prompts = np.where(arrivals < 300.0, 5000, np.arange(600) % 100 + 1000)
    qs = dict(prompt_quantiles(arrivals, prompts, 599.0))
    assert set(qs) == set(PROMPT_QUANTILES)
    assert qs[0.0] >= 1000 and qs[1.0] <= 1099  # nothing older than five minutes
    assert qs[0.5] == pytest.approx(1049.5, abs=1.0)
    assert prompt_quantiles(arrivals, prompts, -1.0) == ()


def test_startup_backlog_does_not_send_the_pool_to_its_maximum() -> None:
    """The example: traffic from t=0 while the two first replicas load for ~3 minutes, so a
    backlog of hundreds of requests meets them. The latencies it causes are not the model's
    error: the scaler sizes for the arrival rate, and ends with corrections near 1."""
    spec = load_scenario_spec(EXAMPLE).spec
    sim = simulation_from_spec(spec, seed=0)
    result = sim.run(600.0)
    assert result.summary.slo_scaling is not None
    (summary,) = result.summary.slo_scaling.scalers
    assert 4 <= summary.max_replicas < 16
    assert 0.7 <= summary.ttft_correction <= 1.4
    assert 0.7 <= summary.itl_correction <= 1.4
    reasons = [e.message for e in result.events if e.reason == "ScalingReplicaSet"]
    assert any("SLO scaler" in m and "req/s forecast" in m for m in reasons)


def step_trace(low: float, high: float, at_s: float, end_s: float) -> Trace:
    """Poisson arrivals at ``low`` then ``high`` req/s; chat-like log-normal lengths."""
    rng = np.random.default_rng(7)
    times: list[float] = []
    t = 0.0
    while t < end_s:
        t += rng.exponential(1.0 / (low if t < at_s else high))
        times.append(t)
    n = len(times)
    prompt = np.clip(rng.lognormal(np.log(1000), 0.6, n), 16, 12000).astype(np.int64)
    output = np.clip(rng.lognormal(np.log(150), 0.8, n), 2, 2000).astype(np.int64)
    return Trace(np.array(times[:-1]), prompt[:-1], output[:-1], "step")


def model_need(capacity: CapacityModel, requests: Trace, rate: float) -> int:
    """What the capacity model says ``rate`` of this mix needs: no corrections, no margin."""
    qs = np.quantile(requests.prompt_tokens, PROMPT_QUANTILES)
    mix = LoadMix(
        float(requests.prompt_tokens.mean()),
        float(requests.output_tokens.mean()),
        tuple((q, float(v)) for q, v in zip(PROMPT_QUANTILES, qs, strict=True)),
    )
    targets, none = SloTargets(2.0, 0.2), Corrections()
    ok = (
        meets(PoolRole.UNIFIED, capacity.predict(PoolRole.UNIFIED, n, rate, mix), targets, none)
        for n in range(1, 17)
    )
    return next(n for n, met in enumerate(ok, start=1) if met)


# The settled count over the need: the oracle's exact prompt quantiles give the need or close;
# the deployable signals read the tail off vLLM's 1-2-5 prompt-length buckets (a p90 of 2,100
# tokens interpolated to 2,550 within 2,000-5,000, the p95 2,600 to 3,800), so they hold more.
SETTLE_OVER = {SignalSource.ORACLE: 2, SignalSource.DEPLOYABLE: 3}


@pytest.mark.parametrize("signals", list(SignalSource))
def test_a_step_in_traffic_is_followed_without_flapping(signals: SignalSource) -> None:
    warm, step_at, end = 120.0, 240.0, 720.0
    base = load_scenario_spec(EXAMPLE).spec
    assert base.serving is not None
    svc = base.serving.services[0]
    traffic = replace(svc.traffic, trace=step_trace(2.0, 20.0, step_at, end), rate_scale=1.0)
    traffic = replace(traffic, repeat=False, start_s=warm)
    svc = replace(svc, traffic=traffic, slo_itl_s=0.2)
    cold = ColdStart(image_pull_s=10.0, storage_gbps=4.0, init_s=30.0)  # about 50 s
    scalers = tuple(replace(s, signals=signals) for s in base.serving.slo_scalers)
    serving = replace(base.serving, services=(svc,), cold_start=cold, slo_scalers=scalers)
    sim = simulation_from_spec(replace(base, serving=serving), seed=0)
    changes: list[tuple[float, int]] = []
    deployments = sim.component(DeploymentController)
    plain = deployments.scale

    def scale(key: str, replicas: int, reason: str = "") -> None:
        changes.append((sim.cluster.now, replicas))
        plain(key, replicas, reason)

    # An instance attribute shadows the method, so the twin's own calls go through the wrapper.
    vars(deployments)["scale"] = scale
    sim.run(warm + end)
    runtime = sim.component(ServingRuntime)
    capacity = runtime.capacity_model(svc.name)
    assert capacity is not None and traffic.trace is not None
    needed = model_need(capacity, traffic.trace.window(step_at, end), 20.0)
    before = [r for t, r in changes if t < warm + step_at]
    after = [r for t, r in changes if t >= warm + step_at]
    assert max(before, default=2) <= 4  # 2 req/s: the floor of two, or close
    assert after and max(after) >= needed
    # A tenfold jump looks like the start of a ramp, so the first answer overshoots (to the
    # maximum with the deployable signals' tail); once the rate holds, the count settles near
    # the need.
    assert max(after) <= 16 if signals is SignalSource.DEPLOYABLE else max(after) < 16
    assert needed <= changes[-1][1] <= needed + SETTLE_OVER[signals]
    counts = [2] + [r for _, r in changes]
    signs = [b > a for a, b in pairwise(counts)]
    assert sum(1 for x, y in pairwise(signs) if x != y) <= 2
    # Once the new replicas serve, the objectives hold.
    outcomes = runtime.services[svc.name].sim.result().outcomes
    late = [o for o in outcomes if o.arrival_s >= warm + step_at + 180.0]
    ttft = sorted(o.ttft_s if o.status is Status.COMPLETED and o.ttft_s else 1e9 for o in late)
    assert ttft[int(0.9 * len(ttft))] <= 2.0
    memory = sim.component(SloScaling).scalers[0].memory
    assert 0.6 <= memory.ttft_correction <= 1.5 and 0.6 <= memory.itl_correction <= 1.5
