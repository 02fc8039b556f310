"""Metric names, types, labels and buckets as vLLM V1 and SGLang export them."""

from __future__ import annotations

import pytest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

from gpuplane.core.tsdb import labels_of
from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.metrics.exporter import engine_samples
from gpuplane.serving.metrics.exposition import exposition
from gpuplane.serving.metrics.families import (
    build_1_2_5_buckets,
    sglang_families,
    vllm_families,
)
from tests.unit.serving.test_engine_fakes import LINEAR, drive, make_config, workload

# vllm/v1/metrics/loggers.py (the reference's §1.1): name -> type.
VLLM_EXPECTED = {
    "vllm:num_requests_running": "gauge",
    "vllm:num_requests_waiting": "gauge",
    "vllm:kv_cache_usage_perc": "gauge",
    "vllm:prefix_cache_queries": "counter",
    "vllm:prefix_cache_hits": "counter",
    "vllm:num_preemptions": "counter",
    "vllm:prompt_tokens": "counter",
    "vllm:generation_tokens": "counter",
    "vllm:request_success": "counter",
    "vllm:time_to_first_token_seconds": "histogram",
    "vllm:inter_token_latency_seconds": "histogram",
    "vllm:request_time_per_output_token_seconds": "histogram",
    "vllm:e2e_request_latency_seconds": "histogram",
    "vllm:request_queue_time_seconds": "histogram",
    "vllm:request_inference_time_seconds": "histogram",
    "vllm:request_prefill_time_seconds": "histogram",
    "vllm:request_decode_time_seconds": "histogram",
    "vllm:iteration_tokens_total": "histogram",
    "vllm:cache_config_info": "gauge",
}
TTFT = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5]
TTFT += [10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0]
ITL = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5]
ITL += [10.0, 20.0, 40.0, 80.0]
LATENCY = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0]
LATENCY += [120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0]


def _scraped(kind: str) -> dict[str, Metric]:
    engine = Engine(make_config(kind, num_gpu_blocks=60 if kind == "vllm" else 240), LINEAR)
    drive(engine, workload(1, n=30))
    text = exposition([(engine, {})])
    return {f.name: f for f in text_string_to_metric_families(text)}


def test_vllm_exposition_parses_with_the_real_names_types_and_buckets() -> None:
    fams = _scraped("vllm")
    for name, kind in VLLM_EXPECTED.items():
        parsed_name = name.removesuffix("_total") if kind == "counter" else name
        assert parsed_name in fams, name
        assert fams[parsed_name].type == kind, name
    removed = {"vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds"}
    assert not removed & set(fams)

    def les(name: str) -> list[float]:
        samples = fams[name].samples
        return [float(s.labels["le"]) for s in samples if s.name.endswith("_bucket")]

    assert les("vllm:time_to_first_token_seconds") == [*TTFT, float("inf")]
    assert les("vllm:inter_token_latency_seconds") == [*ITL, float("inf")]
    assert les("vllm:e2e_request_latency_seconds") == [*LATENCY, float("inf")]
    success = fams["vllm:request_success"].samples
    reasons = {s.labels["finished_reason"] for s in success}
    assert reasons == {"stop", "length", "abort", "error", "repetition"}
    assert all(set(s.labels) == {"model_name", "engine", "finished_reason"} for s in success)
    gauge = fams["vllm:num_requests_running"].samples[0]
    assert set(gauge.labels) == {"model_name", "engine"}


def test_counters_are_exposed_with_total_suffix() -> None:
    engine = Engine(make_config(num_gpu_blocks=60), LINEAR)
    records = drive(engine, workload(2, n=20))
    samples = {(s.name, s.labels): s.value for s in engine_samples(engine, {"pod": "p0"})}
    base = (("engine", "0"), ("model_name", "model"), ("pod", "p0"))
    assert samples[("vllm:prompt_tokens_total", base)] == sum(r.prompt_tokens for r in records)
    generated = sum(r.output_tokens for r in records)
    assert samples[("vllm:generation_tokens_total", base)] == generated
    ttft_count = samples[("vllm:time_to_first_token_seconds_count", base)]
    assert ttft_count == len(records)
    inf_labels = labels_of({**dict(base), "le": "+Inf"})
    assert samples[("vllm:time_to_first_token_seconds_bucket", inf_labels)] == len(records)
    itl = samples[("vllm:inter_token_latency_seconds_count", base)]
    assert itl == sum(r.output_tokens - 1 for r in records)


def test_histogram_buckets_are_cumulative() -> None:
    engine = Engine(make_config(num_gpu_blocks=60), LINEAR)
    drive(engine, workload(3, n=20))
    buckets = [
        s.value
        for s in engine_samples(engine)
        if s.name == "vllm:e2e_request_latency_seconds_bucket"
    ]
    assert buckets == sorted(buckets) and buckets[-1] == 20


def test_sglang_names_and_labels() -> None:
    fams = _scraped("sglang")
    expected = {
        "sglang:num_running_reqs": "gauge",
        "sglang:num_queue_reqs": "gauge",
        "sglang:token_usage": "gauge",
        "sglang:num_used_tokens": "gauge",
        "sglang:cache_hit_rate": "gauge",
        "sglang:gen_throughput": "gauge",
        "sglang:num_retracted_reqs": "gauge",
        "sglang:prompt_tokens": "counter",
        "sglang:generation_tokens": "counter",
        "sglang:time_to_first_token_seconds": "histogram",
        "sglang:inter_token_latency_seconds": "histogram",
        "sglang:e2e_request_latency_seconds": "histogram",
        "sglang:queue_time_seconds": "histogram",
    }
    for name, kind in expected.items():
        assert fams[name].type == kind, name
        for s in fams[name].samples:
            assert set(s.labels) - {"le"} == {"model_name"}
    assert not any(name.startswith("vllm:") for name in fams)


def test_family_tables_are_consistent() -> None:
    assert build_1_2_5_buckets(100) == (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
    for fams in (vllm_families(4096), sglang_families()):
        names = [f.name for f in fams]
        assert len(names) == len(set(names))
        for f in fams:
            assert (f.kind == "histogram") == bool(f.buckets), f.name
            assert list(f.buckets) == sorted(f.buckets), f.name


@pytest.mark.parametrize("kind", ["vllm", "sglang"])
def test_gauges_read_the_engine(kind: str) -> None:
    engine = Engine(make_config(kind, num_gpu_blocks=60 if kind == "vllm" else 240), LINEAR)
    for r in workload(4, n=8, rate=1000.0):
        engine.advance(r.arrival_s)
        engine.add_request(r, r.arrival_s)
    engine.advance(0.2)
    values = {s.name: s.value for s in engine_samples(engine) if "_bucket" not in s.name}
    prefix = "vllm:num_requests_" if kind == "vllm" else "sglang:num_"
    running = values[prefix + ("running" if kind == "vllm" else "running_reqs")]
    waiting = values[prefix + ("waiting" if kind == "vllm" else "queue_reqs")]
    assert running == engine.num_running() and waiting == engine.num_waiting()
    usage = values["vllm:kv_cache_usage_perc" if kind == "vllm" else "sglang:token_usage"]
    assert usage == pytest.approx(engine.kv_usage()) and 0 < usage <= 1
