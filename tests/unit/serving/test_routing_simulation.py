"""ServingSimulation: conservation, rejections, cold starts, removals, P/D, sessions, metrics."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.request import Request, RequestId
from gpuplane.serving.routing.basic import LeastOutstandingRouter, RoundRobinRouter
from gpuplane.serving.routing.outcome import RequestOutcome, SimulationResult, Status
from gpuplane.serving.routing.scorers import WeightedScorerRouter
from gpuplane.serving.routing.simulation import ServingSimulation, SimulationSettings
from gpuplane.serving.traffic.sessions import SessionSpec, generate_sessions
from tests.unit.serving.test_engine_fakes import LINEAR, make_config, workload


def engine(i: int, kind: str = "vllm", **kw: object) -> Engine:
    kw.setdefault("num_gpu_blocks", 60 if kind == "vllm" else 240)
    return Engine(make_config(kind, **kw), LINEAR, f"e{i}")


def finished(result: SimulationResult) -> dict[str, RequestOutcome]:
    return {o.request_id: o for o in result.outcomes}


def test_every_request_completes_and_is_counted_once() -> None:
    sim = ServingSimulation(LeastOutstandingRouter())
    for i in range(3):
        sim.add_engine(engine(i))
    sim.submit(workload(1, n=60))
    result = sim.run()
    assert result.conservation_problems() == []
    assert result.counts() == {"completed": 60, "rejected": 0, "aborted": 0, "in_flight": 0}
    for e in sim.engines():
        assert e.kv.num_free == e.kv.num_blocks
    summary = result.latency_summary()
    assert 0 < summary["ttft_p50_s"] <= summary["ttft_p99_s"] < summary["e2e_p99_s"]
    assert summary["itl_p50_s"] > 0


def test_rejections_carry_their_reason() -> None:
    sim = ServingSimulation(RoundRobinRouter())
    sim.add_engine(engine(0))
    too_long = Request(RequestId("big"), 0.0, 400, 5)
    sim.submit([too_long, Request(RequestId("ok"), 0.1, 20, 5)])
    out = finished(sim.run())
    assert out["big"].status is Status.REJECTED
    assert "max_model_len" in out["big"].reason
    assert out["ok"].status is Status.COMPLETED


def test_cold_start_queues_at_the_router_or_rejects() -> None:
    reqs = [Request(RequestId(f"r{i}"), 0.5 * i, 30, 5) for i in range(6)]
    sim = ServingSimulation(RoundRobinRouter(), SimulationSettings(router_queue_limit=2))
    sim.add_engine(engine(0), ready_at_s=2.2)
    sim.submit(reqs)
    out = finished(sim.run())
    statuses = [out[f"r{i}"].status for i in range(6)]
    # r0, r1 wait in the queue; r2..r4 (t=1.0..2.0) find it full; r5 arrives after 2.2.
    done, rejected = Status.COMPLETED, Status.REJECTED
    assert statuses == [done, done, rejected, rejected, rejected, done]
    assert "router queue full" in out["r2"].reason
    first_token_s = out["r0"].first_token_s
    assert first_token_s is not None and first_token_s > 2.2


def test_drain_finishes_in_flight_work_and_abort_reroutes_it() -> None:
    for drain in (True, False):
        sim = ServingSimulation(RoundRobinRouter())
        sim.add_engine(engine(0))
        sim.add_engine(engine(1))
        sim.submit(workload(2, n=40, rate=40.0))
        sim.run_until(0.4)
        sim.remove_engine("e0", drain=drain)
        result = sim.run()
        assert result.conservation_problems() == []
        assert result.count(Status.COMPLETED) == 40
        late = [o for o in result.outcomes if o.arrival_s > 0.4]
        assert late and all(o.engine_id == "e1" for o in late)
        rerouted = [o for o in result.outcomes if o.reroutes]
        assert bool(rerouted) is (not drain)
        assert [e.engine_id for e in sim.engines()] == ["e1"]


def test_a_draining_engine_killed_at_its_grace_period_aborts_what_is_left() -> None:
    # Long outputs: e0 still serves when the kill comes 0.2 s after the drain began.
    reqs = [Request(RequestId(f"r{i}"), 0.01 * i, 20, 200) for i in range(6)]
    sim = ServingSimulation(RoundRobinRouter())
    sim.add_engine(engine(0))
    sim.add_engine(engine(1))
    sim.submit(reqs)
    sim.run_until(0.1)
    sim.remove_engine("e0", drain=True)
    sim.run_until(0.3)
    assert sim.drained_at("e0") is None
    aborted = sim.kill_engine("e0", "killed after terminationGracePeriodSeconds")
    result = sim.run()
    assert result.conservation_problems() == []
    lost = [o for o in result.outcomes if o.status is Status.ABORTED]
    assert aborted == len(lost) == 3  # round robin: r0, r2, r4 were on e0
    assert all("terminationGracePeriodSeconds" in o.reason and o.reroutes == 0 for o in lost)
    assert result.count(Status.COMPLETED) == 3
    assert sim.kill_engine("e0", "again") == 0  # gone: nothing to kill


def test_a_drained_engine_records_when_it_left() -> None:
    sim = ServingSimulation(RoundRobinRouter())
    sim.add_engine(engine(0))
    sim.add_engine(engine(1))
    sim.submit([Request(RequestId("a"), 0.0, 20, 5), Request(RequestId("b"), 0.0, 20, 5)])
    sim.run_until(0.001)
    sim.remove_engine("e0", drain=True)
    result = sim.run()
    left = sim.drained_at("e0")
    (a,) = [o for o in result.outcomes if o.engine_id == "e0"]
    assert left is not None and a.end_s is not None and left == pytest.approx(a.end_s)
    assert sim.kill_engine("e0", "late") == 0
    assert result.count(Status.COMPLETED) == 2


def test_abort_without_rerouting_counts_aborted() -> None:
    sim = ServingSimulation(RoundRobinRouter(), SimulationSettings(max_reroutes=0))
    sim.add_engine(engine(0))
    sim.submit(workload(3, n=10, rate=100.0))
    sim.run_until(0.05)
    sim.remove_engine("e0", drain=False)
    result = sim.run()
    assert result.conservation_problems() == []
    aborted = [o for o in result.outcomes if o.status is Status.ABORTED]
    assert aborted and all("removed" in o.reason for o in aborted)
    assert result.count(Status.REJECTED) == 10 - len(aborted) - result.count(Status.COMPLETED)


def test_prefill_decode_disaggregation() -> None:
    transfer = 0.25
    sim = ServingSimulation(LeastOutstandingRouter(), kv_transfer_s=lambda tokens: transfer)
    sim.add_engine(engine(0), role="prefill")
    sim.add_engine(engine(1), role="decode")
    short = Request(RequestId("short"), 0.0, 10, 4)  # 10 uncached tokens < 16: not split
    long = Request(RequestId("long"), 0.0, 200, 4)
    sim.submit([short, long])
    out = finished(sim.run())
    assert out["long"].prefill_engine_id == "e0" and out["long"].engine_id == "e1"
    assert out["short"].prefill_engine_id is None and out["short"].engine_id == "e1"
    ttft_s = out["long"].ttft_s
    assert ttft_s is not None and ttft_s > transfer
    prefill, decode = sim.engines()
    assert prefill.stats.generation_tokens == 1  # the max_tokens=1 prefill request
    assert decode.stats.generation_tokens == 8


def test_a_prefill_engine_holds_the_blocks_until_the_decode_engine_has_read_them() -> None:
    # NixlConnector: the prefill engine frees a prompt's blocks when the transfer ends. Its
    # pool (20 blocks) holds one 300-token prompt (19 blocks): the second prefill waits for
    # the first transfer, and the held blocks show in its KV usage meanwhile.
    transfer = 0.5
    sim = ServingSimulation(LeastOutstandingRouter(), kv_transfer_s=lambda tokens: transfer)
    sim.add_engine(engine(0, num_gpu_blocks=20, max_model_len=320), role="prefill")
    sim.add_engine(engine(1), role="decode")
    first = Request(RequestId("a"), 0.0, 300, 4)
    second = Request(RequestId("b"), 0.01, 300, 4)
    sim.submit([first, second])
    prefill, decode = sim.engines()
    sim.run_until(0.3)
    assert list(prefill.held) == ["a#prefill"] and prefill.kv_usage() == 19 / 20
    assert prefill.num_waiting() == 1  # b: no room while a's blocks are held
    out = finished(sim.run())
    a_ttft, b_ttft = out["a"].ttft_s, out["b"].ttft_s
    assert a_ttft is not None and b_ttft is not None
    assert b_ttft > a_ttft + transfer - 0.01  # b's prefill began when a's transfer ended
    assert prefill.held == {} and prefill.kv_usage() == 0.0
    assert decode.stats.generation_tokens == 8


def test_prefix_aware_routing_beats_round_robin_on_sessions() -> None:
    spec = SessionSpec(rate_per_s=2.0, duration_s=30.0, think_mean_s=1.0, system_tokens=200)
    from gpuplane.serving.traffic.generators import LognormalLengths

    spec = replace(spec, user=LognormalLengths(40.0, 0.5, 30.0, 0.5), max_prompt_tokens=380)
    sessions = generate_sessions(spec, np.random.default_rng(3))
    rates = {}
    for router in (RoundRobinRouter(), WeightedScorerRouter()):
        sim = ServingSimulation(router)
        for i in range(4):
            sim.add_engine(engine(i, num_gpu_blocks=120))
        sim.submit_sessions(sessions)
        result = sim.run()
        assert result.conservation_problems() == []
        hits = sum(e.stats.prefix_hits for e in sim.engines())
        rates[router.name] = hits / sum(e.stats.prefix_queries for e in sim.engines())
    assert rates["llm-d"] > rates["round-robin"] + 0.1


def test_scrapes_record_every_engine() -> None:
    sim = ServingSimulation(LeastOutstandingRouter(), SimulationSettings(scrape_interval_s=0.5))
    for i in range(2):
        sim.add_engine(engine(i))
    sim.submit(workload(4, n=20))
    result = sim.run()
    assert result.store is not None
    pods = {dict(s.labels)["pod"] for s in result.store.series("vllm:num_requests_running")}
    assert pods == {"e0", "e1"}


def test_same_seed_same_run() -> None:
    def run(seed: int) -> list[tuple[str, str | None, float | None]]:
        sim = ServingSimulation(LeastOutstandingRouter(), SimulationSettings(seed=seed))
        for i in range(3):
            sim.add_engine(engine(i))
        sim.submit(workload(5, n=40))
        return [(o.request_id, o.engine_id, o.end_s) for o in sim.run().outcomes]

    assert run(1) == run(1)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 1000),
    kind=st.sampled_from(["vllm", "sglang"]),
    actions=st.lists(
        st.tuples(st.floats(0.0, 3.0), st.sampled_from(["add", "drain", "abort"])),
        max_size=4,
    ),
    queue=st.sampled_from([0, 3]),
    reroutes=st.sampled_from([0, 2]),
    until=st.sampled_from([None, 1.5]),
)
def test_conservation_under_engine_churn(
    seed: int,
    kind: str,
    actions: list[tuple[float, str]],
    queue: int,
    reroutes: int,
    until: float | None,
) -> None:
    settings_ = SimulationSettings(router_queue_limit=queue, max_reroutes=reroutes, seed=seed)
    sim = ServingSimulation(LeastOutstandingRouter(), settings_)
    sim.add_engine(engine(0, kind))
    sim.add_engine(engine(1, kind), ready_at_s=0.5)
    reqs = workload(seed, n=40, rate=15.0)
    reqs.append(Request(RequestId("too-long"), 1.0, 500, 3))
    sim.submit(sorted(reqs, key=lambda r: r.arrival_s))
    added = 2
    for t, what in sorted(actions):
        sim.run_until(t)
        live = [e.engine_id for e in sim.engines()]
        if what == "add":
            sim.add_engine(engine(added, kind), ready_at_s=t + 0.3)
            added += 1
        elif live:
            sim.remove_engine(live[0], drain=what == "drain")
    result = sim.run(until)
    assert result.conservation_problems() == []
    arrived = sum(1 for r in reqs if until is None or r.arrival_s <= until)
    assert result.num_arrived == sum(result.counts().values())
    counts = result.counts()
    assert result.num_arrived >= arrived - 1  # arrivals at exactly ``until`` may be pending
    if until is None:
        assert result.num_arrived == len(reqs) == arrived
        too_long = finished(result)["too-long"]
        # Rejected by the engines, or queued while no engine was left to ask.
        assert too_long.status is Status.REJECTED or too_long.reason == "queued at the router"
        stuck = [o for o in result.outcomes if o.status is Status.IN_FLIGHT]
        assert all(o.reason == "queued at the router" for o in stuck)
        assert len(stuck) == counts["in_flight"]
        for e in sim.engines():
            assert e.kv.num_free == e.kv.num_blocks


@pytest.mark.parametrize("kind", ["vllm", "sglang"])
def test_fast_engines_give_the_reference_run_through_a_kv_aware_router(kind: str) -> None:
    """Routers read KV usage mid-run: fast engines must show what step-by-step ones show."""

    def run(fast: bool) -> list[tuple[str, str | None, float | None, int]]:
        sim = ServingSimulation(WeightedScorerRouter(), SimulationSettings(seed=3))
        for i in range(3):
            blocks = 60 if kind == "vllm" else 240
            cfg = make_config(kind, num_gpu_blocks=blocks)
            sim.add_engine(Engine(cfg, LINEAR, f"e{i}", fast=fast))
        sim.submit(workload(9, n=80, rate=30.0))
        out = sim.run().outcomes
        return [(o.request_id, o.engine_id, o.end_s, o.num_preemptions) for o in out]

    assert run(True) == run(False)
