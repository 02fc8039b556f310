"""What the vLLM-V1-like and SGLang-like schedulers put in each step."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.engine.sglang_scheduler import SglangScheduler
from gpuplane.serving.request import FinishReason, Request, RequestId, Segment
from tests.unit.serving.test_engine_fakes import LINEAR, drive, make_config, make_request, workload


@dataclass
class Step:
    start_s: float
    chunks: dict[str, int]  # request -> tokens this step
    running: int
    prefill: bool  # some request computed prompt tokens
    decode: bool  # some request decoded


def recorded(engine: Engine) -> list[Step]:
    """Capture every planned step (run the engine in reference mode to see each one)."""
    steps: list[Step] = []
    original = engine._start

    def start(at: float) -> None:
        original(at)
        fl = engine._inflight
        if fl is None:
            return
        chunks = {str(r.req.request_id): n for r, n in fl.plan.items}
        decodes = [r for r, n in fl.plan.items if n == 1 and r.num_output > 0]
        steps.append(
            Step(at, chunks, engine.num_running(), len(decodes) < len(chunks), bool(decodes))
        )

    # An instance attribute shadows the method, so the engine's own calls go through the wrapper.
    vars(engine)["_start"] = start
    return steps


def test_vllm_token_budget_and_max_num_seqs_hold_every_step() -> None:
    cfg = make_config(num_gpu_blocks=400, max_num_seqs=6, max_num_batched_tokens=128)
    engine = Engine(cfg, LINEAR, fast=False)
    steps = recorded(engine)
    drive(engine, workload(3, n=40, rate=50.0))
    assert steps
    assert max(sum(s.chunks.values()) for s in steps) <= 128
    assert max(s.running for s in steps) <= 6
    assert max(len(s.chunks) for s in steps) == 6  # the limit is reached


def test_vllm_chunked_prefill_splits_a_long_prompt_and_keeps_decoding() -> None:
    cfg = make_config(num_gpu_blocks=200, max_model_len=1000, max_num_batched_tokens=200)
    engine = Engine(cfg, LINEAR, fast=False)
    steps = recorded(engine)
    reqs = [make_request(0, 0.0, 20, 30), make_request(1, 0.05, 450, 5)]
    records = {r.request_id: r for r in drive(engine, reqs)}
    long_steps = [i for i, s in enumerate(steps) if steps[i].chunks.get("r1", 0) > 1]
    # 450 prompt tokens over a 200-token budget shared with r0's decode: 199 + 199 + 52.
    assert [steps[i].chunks["r1"] for i in long_steps] == [199, 199, 52]
    assert all(steps[i].chunks.get("r0") == 1 for i in long_steps)  # decodes ride along
    # The step that computes the last chunk produces the first token when it ends.
    assert records["r1"].first_token_s == pytest.approx(steps[long_steps[-1] + 1].start_s)


def test_vllm_long_prefill_threshold_caps_chunks() -> None:
    cfg = make_config(num_gpu_blocks=200, long_prefill_token_threshold=64)
    engine = Engine(cfg, LINEAR, fast=False)
    steps = recorded(engine)
    drive(engine, [make_request(0, 0.0, 150, 3)])
    assert [s.chunks["r0"] for s in steps[:3]] == [64, 64, 22]


def test_vllm_preempts_the_last_admitted_request_and_requeues_it_first() -> None:
    # 12 blocks of 16: two requests of 60 prompt tokens grow until the pool runs out.
    cfg = make_config(num_gpu_blocks=26, max_model_len=400, enable_prefix_caching=False)
    engine = Engine(cfg, LINEAR, fast=False, record_token_times=True)
    reqs = [make_request(0, 0.0, 60, 300), make_request(1, 0.001, 60, 300)]
    records = {r.request_id: r for r in drive(engine, reqs, check=True)}
    assert records["r1"].num_preemptions >= 1 and records["r0"].num_preemptions == 0
    assert records["r0"].end_s < records["r1"].end_s
    assert engine.stats.preemptions == records["r1"].num_preemptions
    for r in records.values():
        assert r.output_tokens == 300 and r.finish_reason is FinishReason.STOP
    assert engine.kv.num_free == engine.kv.num_blocks


def test_prefix_cache_hit_reuses_full_blocks_and_leaves_one_token() -> None:
    cfg = make_config(num_gpu_blocks=200)
    engine = Engine(cfg, LINEAR, fast=False)
    shared = Segment("system", 160)
    reqs = [
        make_request(0, 0.0, 200, 2, (shared, Segment("a", 40))),
        make_request(1, 1.0, 200, 2, (shared, Segment("b", 40))),
        make_request(2, 2.0, 160, 2, (shared,)),  # the whole prompt is cached
    ]
    records = {r.request_id: r for r in drive(engine, reqs)}
    assert records["r0"].cached_tokens == 0
    assert records["r1"].cached_tokens == 160
    assert records["r2"].cached_tokens == 144  # one block recomputed to get logits
    assert engine.stats.prefix_queries == 200 + 200 + 160
    assert engine.stats.prefix_hits == 160 + 144


def test_sglang_never_mixes_prefill_and_decode_and_chunks_prompts() -> None:
    cfg = make_config("sglang", num_gpu_blocks=400, chunked_prefill_size=96)
    engine = Engine(cfg, LINEAR, fast=False)
    steps = recorded(engine)
    reqs = [make_request(0, 0.0, 20, 40), make_request(1, 0.05, 250, 3)]
    drive(engine, reqs)
    assert not any(s.prefill and s.decode for s in steps)
    assert [s.chunks["r1"] for s in steps if "r1" in s.chunks and s.prefill] == [96, 96, 58]


def _req(i: int, t: float, prompt: int, output: int) -> Request:
    return Request(RequestId(f"r{i}"), t, prompt, output, max_tokens=output)


def test_sglang_retracts_fewest_outputs_first_and_raises_the_ratio() -> None:
    # Four long requests decode until SGLang's new-token ratio has decayed to ~0.5; a burst then
    # fits the optimistic estimate but not the memory the long requests still need.
    cfg = make_config(
        "sglang", num_gpu_blocks=500, block_size=4, max_model_len=1000, max_num_seqs=16
    )
    engine = Engine(cfg, LINEAR, fast=False)
    sched = engine.scheduler
    assert isinstance(sched, SglangScheduler)
    longs = [_req(i, 0.0, 20, 450) for i in range(4)]
    burst = [_req(i, 2.0, 20, 250) for i in range(4, 8)]
    ratios: list[float] = []
    original = engine._start

    def start(at: float) -> None:
        original(at)
        ratios.append(sched.new_token_ratio)

    # An instance attribute shadows the method, so the engine's own calls go through the wrapper.
    vars(engine)["_start"] = start
    records = {r.request_id: r for r in drive(engine, [*longs, *burst], check=True)}
    retracted = {k for k, r in records.items() if r.num_preemptions}
    assert retracted and retracted <= {"r4", "r5", "r6", "r7"}
    low = ratios.index(min(ratios))
    assert min(ratios) < 0.6 and max(ratios[low:]) > min(ratios)  # decayed, then raised
    assert all(r.output_tokens == (450 if k < "r4" else 250) for k, r in records.items())


def test_finish_reasons_follow_vllm_length_checks() -> None:
    cfg = make_config(num_gpu_blocks=200, max_model_len=100)
    engine = Engine(cfg, LINEAR, fast=False)
    reqs = [
        make_request(0, 0.0, 50, 10),  # EOS after 10
        make_request(1, 0.0, 50, 80),  # max_model_len stops it at 50 tokens
        Request(RequestId("r2"), 0.0, 50, 10, max_tokens=10),  # both: length
    ]
    records = {r.request_id: r for r in drive(engine, reqs)}
    assert records["r0"].finish_reason is FinishReason.STOP
    assert (records["r1"].finish_reason, records["r1"].output_tokens) == (FinishReason.LENGTH, 50)
    assert records["r2"].finish_reason is FinishReason.LENGTH


def test_prompt_that_leaves_no_room_is_refused() -> None:
    engine = Engine(make_config(max_model_len=100), LINEAR)
    assert engine.rejection(make_request(0, 0.0, 100, 1)) is not None
    assert engine.rejection(make_request(1, 0.0, 99, 1)) is None
    with pytest.raises(ValueError, match="cannot serve"):
        engine.add_request(make_request(0, 0.0, 100, 1), 0.0)


@pytest.mark.parametrize("fast", [True, False])
def test_abort_all_frees_every_block(fast: bool) -> None:
    # Abort at many instants: mid-prefill, mid-run, on steps where decoders take new blocks.
    for k in range(40):
        when = 0.02 + 0.0197 * k
        engine = Engine(make_config(num_gpu_blocks=100, max_model_len=1000), LINEAR, fast=fast)
        for i in range(5):
            engine.add_request(make_request(i, 0.0, 100 + i, 300), 0.0)
        engine.advance(when)
        assert engine.kv.num_free < engine.kv.num_blocks
        records = engine.abort_all(when)
        assert sorted(r.request_id for r in records) == [f"r{i}" for i in range(5)]
        assert all(r.finish_reason is FinishReason.ABORT for r in records)
        engine.kv.check_invariants()
        assert engine.kv.num_free == engine.kv.num_blocks and engine.is_idle()
