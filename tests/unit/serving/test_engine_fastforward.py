"""Fast mode (decoders as a group, runs of decode steps priced at once) equals the reference
(every step, every request; optionally the per-block KV cache) on random workloads."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.serving.batch import StepTimeModel
from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.engine.live import RequestRecord
from tests.unit.serving.test_engine_fakes import LINEAR, FakeStepModel, drive, make_config, workload


def _same(a: list[RequestRecord], b: list[RequestRecord]) -> None:
    assert [r.request_id for r in a] == [r.request_id for r in b]
    for x, y in zip(a, b, strict=True):
        assert x.output_tokens == y.output_tokens, x.request_id
        assert x.num_preemptions == y.num_preemptions, x.request_id
        assert x.cached_tokens == y.cached_tokens, x.request_id
        assert x.finish_reason == y.finish_reason
        assert x.token_times is not None and y.token_times is not None
        np.testing.assert_allclose(x.token_times, y.token_times, rtol=0, atol=1e-9)
        assert x.end_s == pytest.approx(y.end_s, abs=1e-9)


def _three_ways(cfg_kw: dict[str, Any], seed: int, model: StepTimeModel) -> list[Engine]:
    cfg = make_config(**cfg_kw)
    reqs = workload(seed)
    engines = [
        Engine(cfg, model, "fast", record_token_times=True),
        Engine(cfg, model, "ref", fast=False, record_token_times=True),
        Engine(cfg, model, "blocks", fast=False, reference_kv=True, record_token_times=True),
    ]
    results = [drive(e, reqs, check=True) for e in engines]
    _same(results[0], results[1])
    _same(results[1], results[2])
    for e in engines:
        assert e.kv.num_free == e.kv.num_blocks  # every block came back
    return engines


@pytest.mark.parametrize("kind", ["vllm", "sglang"])
@pytest.mark.parametrize("caching", [True, False])
@pytest.mark.parametrize("model", [LINEAR, FakeStepModel()], ids=["run-priced", "step-priced"])
def test_fast_equals_reference_under_memory_pressure(
    kind: str, caching: bool, model: StepTimeModel
) -> None:
    kw: dict[str, Any] = {"kind": kind, "enable_prefix_caching": caching}
    kw["num_gpu_blocks"] = 30 if kind == "vllm" else 110  # tight: preemption and retraction
    engines = _three_ways(kw, seed=2, model=model)
    assert engines[0].stats.preemptions == engines[1].stats.preemptions
    if kind == "vllm":
        assert engines[0].stats.preemptions > 0


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    kind=st.sampled_from(["vllm", "sglang"]),
    threshold=st.sampled_from([0, 48]),
    blocks=st.sampled_from([30, 80]),
    policy=st.sampled_from(["fcfs", "lpm"]),
)
def test_fast_equals_reference_random(
    seed: int, kind: str, threshold: int, blocks: int, policy: str
) -> None:
    kw: dict[str, object] = {
        "kind": kind,
        "long_prefill_token_threshold": threshold,
        "num_gpu_blocks": blocks if kind == "vllm" else blocks * 4,
        "schedule_policy": policy,
    }
    _three_ways(kw, seed=seed, model=LINEAR)


def test_fast_mode_prices_runs_not_steps() -> None:
    """Long decodes with few arrivals and enough KV blocks: far fewer plans than steps."""
    cfg = make_config(num_gpu_blocks=2000, max_model_len=2000)
    reqs = workload(7, n=20, rate=2.0)
    reqs = [r.__class__(r.request_id, r.arrival_s, r.prompt_tokens, 1000) for r in reqs]
    plans = 0
    engine = Engine(cfg, LINEAR, "fast")
    original = engine._start

    def counting(at: float) -> None:
        nonlocal plans
        plans += 1
        original(at)

    # An instance attribute shadows the method, so the engine's own calls go through the wrapper.
    vars(engine)["_start"] = counting
    drive(engine, reqs)
    assert engine.stats.preemptions == 0
    assert engine.num_steps > 20 * plans
