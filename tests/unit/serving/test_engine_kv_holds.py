"""P/D with vLLM's NixlConnector: a prefill engine keeps a finished request's KV blocks for the
decode engine (``Engine.hold_on_finish`` / ``release_held``), and a failed KV load ends a
request as FINISHED_ERROR (``Engine.fail_request``)."""

from __future__ import annotations

import math

from gpuplane.core.clock import FixedClock
from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.engine.wall_clock import ClockDriver
from gpuplane.serving.metrics.exporter import engine_samples
from gpuplane.serving.request import FinishReason, Request, RequestId
from tests.unit.serving.test_engine_fakes import LINEAR, make_config


def _driver(blocks: int = 20) -> tuple[ClockDriver, FixedClock]:
    clock = FixedClock()

    def jump(t: float) -> None:
        clock.t_s = max(clock.t_s, t)

    engine = Engine(make_config(num_gpu_blocks=blocks, max_model_len=320), LINEAR, "p")
    return ClockDriver(engine, clock, jump), clock


def _prefill(i: int, t: float, prompt: int, max_tokens: int | None = 1) -> Request:
    """A P/D prefill (max_tokens=1, capped by length) or, without max_tokens, one that stops."""
    return Request(RequestId(f"r{i}"), t, prompt, 1, max_tokens=max_tokens)


def test_held_blocks_stay_taken_until_released_and_a_waiting_request_then_runs() -> None:
    driver, clock = _driver()
    engine = driver.engine
    engine.hold_on_finish.add("r0")
    driver.submit(_prefill(0, 0.0, 300))  # 19 of the 20 blocks
    driver.drain()
    (rec,) = driver.records
    assert rec.finish_reason is FinishReason.LENGTH
    assert list(engine.held) == ["r0"] and engine.num_held_blocks() == 19
    assert engine.kv.num_free == 1 and engine.kv_usage() == 1 - 1 / 20
    assert engine.hold_on_finish == set()
    # A request needing 7 blocks waits: the held blocks are not free and cannot be preempted.
    clock.t_s = 1.0
    later = driver.submit(_prefill(1, 1.0, 100))
    driver.drain()
    assert later.first_scheduled_s is None and engine.num_waiting() == 1
    assert math.isinf(engine.next_event_time())
    # The decode engine read the blocks (or the hold expired): freed, and the request runs.
    clock.t_s = 2.0
    assert driver.release_held("r0") == 19
    assert engine.held == {} and engine.next_event_time() > 2.0
    driver.drain()
    assert later.first_scheduled_s == 2.0 and [r.request_id for r in driver.records] == [
        "r0",
        "r1",
    ]
    assert driver.release_held("r0") == 0  # released once
    assert engine.kv_usage() == 0.0


def test_only_a_request_capped_by_length_keeps_its_blocks() -> None:
    driver, _ = _driver()
    engine = driver.engine
    engine.hold_on_finish.update({"r0", "r1"})
    driver.submit(_prefill(0, 0.0, 40, max_tokens=None))  # ends by EOS: "stop"
    driver.submit(_prefill(1, 0.0, 40))
    driver.drain()
    reasons = {r.request_id: r.finish_reason for r in driver.records}
    assert reasons == {"r0": FinishReason.STOP, "r1": FinishReason.LENGTH}
    assert list(engine.held) == ["r1"] and engine.num_held_blocks() == 3
    assert engine.hold_on_finish == set()
    engine.abort_all(engine.now_s)  # an engine removed gives its held blocks back too
    assert engine.held == {} and engine.kv.num_free == 20


def test_a_failed_kv_load_is_a_finished_request_with_reason_error() -> None:
    driver, clock = _driver()
    clock.t_s = 3.0
    rec = driver.fail(Request(RequestId("d0"), 2.5, 120, 8, max_tokens=8), queued_s=2.5)
    assert (rec.finish_reason, rec.end_s, rec.output_tokens) == (FinishReason.ERROR, 3.0, 0)
    assert rec.first_token_s is None and driver.records == []
    samples = {
        (s.name, dict(s.labels).get("finished_reason")): s.value
        for s in engine_samples(driver.engine, {})
    }
    assert samples[("vllm:request_success_total", "error")] == 1.0
    assert samples[("vllm:request_success_total", "stop")] == 0.0
    assert samples[("vllm:e2e_request_latency_seconds_sum", None)] == 0.5
    assert driver.engine.is_idle()
