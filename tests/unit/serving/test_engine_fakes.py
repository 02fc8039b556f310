"""Helpers for the engine tests: deterministic fake step-time models, workloads, a driver.

No tests here; the test modules import from it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gpuplane.serving.batch import BatchShape, StepTime
from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.engine.live import RequestRecord
from gpuplane.serving.engine.settings import EngineConfig
from gpuplane.serving.engine.step_timer import LinearStepModel
from gpuplane.serving.request import Request, RequestId, Segment


@dataclass(frozen=True)
class FakeStepModel:
    """``a + b x tokens + c x decode contexts + d x prefill attention``; no run pricing, so the
    engine asks it step by step."""

    a: float = 0.005
    b: float = 2e-4
    c: float = 3e-7
    d: float = 1e-9

    def step_time(self, batch: BatchShape) -> StepTime:
        attn = sum(p.new_tokens * (p.context_tokens + p.new_tokens) for p in batch.prefills)
        total = self.a + self.b * batch.num_tokens + self.c * sum(batch.decode_contexts)
        return StepTime(total_s=total + self.d * attn)


LINEAR = LinearStepModel(0.01, 1e-4, 1e-6, 1e-8)


def make_config(kind: str = "vllm", **kw: object) -> EngineConfig:
    base: dict[str, object] = {
        "kind": kind,
        "num_gpu_blocks": 60 if kind == "vllm" else 240,
        "block_size": 16 if kind == "vllm" else 4,
        "max_model_len": 400,
        "max_num_seqs": 12,
        "max_num_batched_tokens": 200,
        "chunked_prefill_size": 96,
        "max_prefill_tokens": 300,
    }
    base.update(kw)
    return EngineConfig.model_validate(base)


def make_request(
    i: int, t: float, prompt: int, output: int, segments: tuple[Segment, ...] = ()
) -> Request:
    return Request(RequestId(f"r{i}"), t, prompt, output, segments)


def workload(seed: int, n: int = 50, shared: float = 0.6, rate: float = 20.0) -> list[Request]:
    """Random requests; a share of them start with one of three shared system prompts."""
    rng = np.random.default_rng(seed)
    t, out = 0.0, []
    for i in range(n):
        t += float(rng.exponential(1.0 / rate))
        prompt = int(rng.integers(5, 300))
        output = int(rng.integers(1, 80))
        segs: tuple[Segment, ...] = ()
        if rng.random() < shared and prompt > 41:
            k = int(rng.integers(1, 4))
            head = min(prompt - 1, 40 * k)
            segs = (Segment(f"sys{k}", head), Segment(f"u{i}", prompt - head))
        out.append(make_request(i, t, prompt, output, segs))
    return out


def drive(engine: Engine, requests: list[Request], check: bool = False) -> list[RequestRecord]:
    """Feed the requests at their arrival times, run to the end, return records by id."""
    records: list[RequestRecord] = []
    for req in requests:
        while engine.next_event_time() <= req.arrival_s:
            records += engine.advance(engine.next_event_time())
            if check:
                engine.kv.check_invariants()
        records += engine.advance(req.arrival_s)
        engine.add_request(req, req.arrival_s)
    while math.isfinite(engine.next_event_time()):
        records += engine.advance(engine.next_event_time())
        if check:
            engine.kv.check_invariants()
    return sorted(records, key=lambda r: r.request_id)
