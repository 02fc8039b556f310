"""An engine driven by a clock that moves on its own gets the records the simulation gets."""

from __future__ import annotations

import pytest

from gpuplane.core.clock import FixedClock
from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.engine.live import RequestRecord
from gpuplane.serving.engine.wall_clock import ClockDriver
from gpuplane.serving.request import Request
from gpuplane.serving.routing.basic import RoundRobinRouter
from gpuplane.serving.routing.simulation import ServingSimulation
from tests.unit.serving.test_engine_fakes import LINEAR, make_config, make_request, workload


class JumpingClock(FixedClock):
    """A wall clock whose waits return at once, at the time waited for (never earlier)."""

    def __init__(self) -> None:
        super().__init__(0.0)
        self.waits = 0

    def wait_until(self, t_s: float) -> None:
        self.waits += 1
        self.t_s = max(self.t_s, t_s)


def _simulated(kind: str, requests: list[Request]) -> dict[str, tuple[object, ...]]:
    sim = ServingSimulation(RoundRobinRouter())
    sim.add_engine(Engine(make_config(kind), LINEAR, "e0"))
    sim.submit(requests)
    return {
        o.request_id: (o.first_token_s, o.end_s, o.output_tokens, o.cached_tokens)
        for o in sim.run().outcomes
    }


@pytest.mark.parametrize("kind", ["vllm", "sglang"])
@pytest.mark.parametrize("seed", [1, 2])
def test_clock_driven_engine_matches_the_simulation(kind: str, seed: int) -> None:
    requests = workload(seed, n=60)
    # Two requests of one instant: both are queued before the engine plans.
    requests.insert(5, make_request(999, requests[4].arrival_s, 30, 4))
    clock = JumpingClock()
    engine = Engine(make_config(kind), LINEAR, "e0")
    records = ClockDriver(engine, clock, clock.wait_until).run(requests)
    driven = {
        r.request_id: (r.first_token_s, r.end_s, r.output_tokens, r.cached_tokens) for r in records
    }
    assert driven == _simulated(kind, requests)
    assert engine.is_idle() and clock.waits > len(requests)


def test_a_late_clock_still_runs_steps_back_to_back() -> None:
    # The clock reads 0.5 s late at every wake: steps already ended are committed at once, with
    # the times the step model gives, so the records are those of an on-time clock.
    requests = [make_request(i, 0.0, 20 + 7 * i, 3 + i % 5) for i in range(12)]
    on_time, late = JumpingClock(), JumpingClock()
    ref = ClockDriver(Engine(make_config(), LINEAR, "e0"), on_time, on_time.wait_until)
    lagging = ClockDriver(
        Engine(make_config(), LINEAR, "e0"), late, lambda t: late.wait_until(t + 0.5)
    )

    def by_id(r: RequestRecord) -> str:
        return r.request_id

    assert sorted(ref.run(requests), key=by_id) == sorted(lagging.run(requests), key=by_id)
    assert late.now_s() > on_time.now_s()


def test_a_request_submitted_at_its_arrival_starts_then_not_when_parsed() -> None:
    # The server saw it at 1.0 and submits it at 1.004 (after reading its body): its first step
    # starts at 1.0, as the simulation starts it; never before the engine's own time.
    req = make_request(1, 1.0, 40, 2)
    on_time = JumpingClock()
    expected = ClockDriver(Engine(make_config(), LINEAR, "e0"), on_time, on_time.wait_until)
    want = expected.run([req])[0].first_token_s
    clock = JumpingClock()
    engine = Engine(make_config(), LINEAR, "e0")
    driver = ClockDriver(engine, clock, clock.wait_until)
    clock.t_s = 1.004
    driver.submit(req, at=1.0)
    assert engine.now_s == 1.0
    driver.drain()
    assert driver.records[0].first_token_s == want
    driver.submit(make_request(2, 0.5, 40, 2), at=0.5)  # the engine is past 0.5 by now
    assert engine.now_s == clock.now_s() > 1.004


def test_busy_seconds_are_the_steps_run_time() -> None:
    # One request alone: the engine is busy from its arrival to its last token, back to back;
    # the split puts the prefill step on the prefill side.
    clock = JumpingClock()
    engine = Engine(make_config(), LINEAR, "e0")
    record = ClockDriver(engine, clock, clock.wait_until).run([make_request(1, 2.0, 300, 20)])[0]
    prefill, decode = engine.busy_seconds(clock.now_s())
    assert record.first_token_s is not None
    assert prefill + decode == pytest.approx(record.end_s - 2.0, rel=1e-12)
    assert prefill == pytest.approx(record.first_token_s - 2.0, rel=1e-12)
    assert engine.busy_seconds(clock.now_s() + 10.0) == (prefill, decode)  # idle since
    # Mid-step: the elapsed part of the step in progress counts.
    engine2 = Engine(make_config(), LINEAR, "e0")
    engine2.add_request(make_request(1, 0.0, 300, 20), 0.0)
    end = engine2.next_step_end_s()
    assert engine2.busy_seconds(end / 2) == pytest.approx((end / 2, 0.0))
