"""Equivalence (issue 25, test 4a): one recorded request sequence routed by the twin's request
path and by the live router's picker gives the same routes.

The twin runs a serving simulation and every call of its dispatcher is recorded with the engine
states it was given. The live side replays the same requests, in the same order, through
``live.router.picker.Picker``: for each decision it is given backends in the equivalent state
(what their ``/health``, ``/metrics`` and ``/v1/models`` would say: readiness, role, waiting and
running requests, KV usage and blocks, ``max_model_len``, and the router's own count of
requests in flight) and builds its views and routing state its own way (its prefix index,
session table, round-robin counter and tie-break stream). The routes must be equal, call for
call, the P/D split's figure (what the decode engine holds, from the prefix index on both sides)
included; so must the views the routers read. Without P/D the twin does not estimate what an
engine holds (no router here reads it), so that figure is left out of the comparison there.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest

from gpuplane.live.router.backends import Backend, EngineLoadScrape
from gpuplane.live.router.picker import Picker
from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.request import Request, RequestId
from gpuplane.serving.routing import request_path
from gpuplane.serving.routing.dispatch import (
    DispatchBook,
    DispatchPolicy,
    EngineState,
    Refusal,
    Route,
    dispatch,
    room_needed,
)
from gpuplane.serving.routing.pd import PDSettings
from gpuplane.serving.routing.registry import make_router
from gpuplane.serving.routing.router import Role
from gpuplane.serving.routing.simulation import ServingSimulation, SimulationSettings
from gpuplane.serving.traffic.generators import LognormalLengths
from gpuplane.serving.traffic.sessions import SessionSpec, generate_sessions
from tests.unit.serving.test_engine_fakes import LINEAR, make_config, workload

NUM_BLOCKS = 400  # large enough that nothing routed is evicted (see the module docstring)
SEED = 5


@dataclass(frozen=True, slots=True)
class Call:
    req: Request
    engines: tuple[EngineState, ...]
    now_s: float
    route: Route


def twin_calls(
    policy: str, pd: bool, monkeypatch: pytest.MonkeyPatch, short_engine: bool = False
) -> list[Call]:
    calls: list[Call] = []

    def recording(
        req: Request, engines: tuple[EngineState, ...], book: DispatchBook, p: DispatchPolicy
    ) -> Route:
        route = dispatch(req, engines, book, p)
        calls.append(Call(req, engines, book.now_s, route))
        return route

    monkeypatch.setattr(request_path, "dispatch", recording)
    sim = ServingSimulation(
        make_router(policy),
        SimulationSettings(seed=SEED, router_queue_limit=4, pd=PDSettings(16)),
        prefill_router=make_router(policy) if pd else None,
        kv_transfer_s=(lambda n: 2e-4 * n) if pd else None,
    )
    for i in range(4):
        config = make_config("vllm", num_gpu_blocks=NUM_BLOCKS)
        if short_engine and i == 1:
            config = make_config("vllm", num_gpu_blocks=NUM_BLOCKS, max_model_len=150)
        role: Role = ("prefill" if i < 2 else "decode") if pd else "both"
        sim.add_engine(Engine(config, LINEAR, f"e{i}"), role=role, ready_at_s=0.3 * i)
    spec = SessionSpec(rate_per_s=2.0, duration_s=6.0, think_mean_s=0.5, system_tokens=128)
    spec = replace(spec, user=LognormalLengths(30.0, 0.5, 25.0, 0.5), max_prompt_tokens=300)
    sim.submit_sessions(generate_sessions(spec, np.random.default_rng(3)))
    long = Request(RequestId("long"), 3.0, 450, 4)  # longer than every engine's context
    sim.submit(sorted([*workload(7, n=80, rate=12.0), long], key=lambda r: r.arrival_s))
    result = sim.run()
    monkeypatch.undo()
    assert result.conservation_problems() == []
    return calls


def backends_like(engines: tuple[EngineState, ...]) -> list[Backend]:
    """Live backends in the state the twin's engines were in (as a scrape would read them)."""
    out = []
    for e in engines:
        v = e.view
        b = Backend(v.engine_id, e.role)
        b.ready, b.outstanding, b.max_model_len = e.ready, v.outstanding, e.max_model_len
        b.load = EngineLoadScrape(
            v.num_waiting, v.num_running, v.kv_usage, v.block_size, NUM_BLOCKS
        )
        out.append(b)
    return out


@pytest.mark.parametrize(
    ("policy", "pd", "short_engine"),
    [
        ("llm-d", False, False),
        ("llm-d", False, True),  # one engine with a shorter max_model_len
        ("round-robin", False, False),
        ("least-outstanding", False, True),
        ("session-affinity", False, False),
        ("llm-d", True, False),
        ("round-robin", True, False),
        ("least-outstanding", True, True),
    ],
)
def test_the_live_picker_routes_as_the_twin(
    policy: str, pd: bool, short_engine: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = twin_calls(policy, pd, monkeypatch, short_engine)
    assert len(calls) > 100
    picker = Picker(policy, SEED, PDSettings(16))
    for k, call in enumerate(calls):
        backends = backends_like(call.engines)
        room = room_needed(call.req)
        chain = picker.state.chain(call.req, picker.policy)
        live_views = picker.engine_states(call.req, backends, chain)
        for twin_state, live_state in zip(call.engines, live_views, strict=True):
            # The views a router reads: of the ready engines with room for the request (the
            # twin leaves the others' views empty).
            need = call.req.prompt_tokens + 1 if twin_state.role == "prefill" else room
            if twin_state.ready and need <= twin_state.max_model_len:
                assert live_state.view[:8] == twin_state.view[:8], (k, call.req.request_id)
            assert live_state[1:] == twin_state[1:]
        got = picker.pick_pd(call.req, backends, call.now_s).decision
        if not pd:  # the twin reads what an engine holds only for the split
            got = got._replace(cached_tokens=0)
        assert got == call.route, (k, call.req.request_id)
    splits = sum(1 for c in calls if c.route.prefill_engine_id is not None)
    refused = sum(1 for c in calls if c.route.engine_id is None)
    if pd:
        assert 0 < splits < len(calls)  # some split, some served whole (short prompts)
    assert all(c.route.refusal is not None for c in calls if c.route.engine_id is None)
    too_long = [c for c in calls if c.route.refusal is Refusal.PROMPT_TOO_LONG]
    assert [c.req.request_id for c in too_long] == ["long"]
    assert too_long[0].route.max_model_len == 400 and refused >= 1
    if short_engine:  # e1 (max_model_len 150) was left out while ready
        assert any(room_needed(c.req) > 150 and c.engines[1].ready for c in calls)
