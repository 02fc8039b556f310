"""The dispatcher: candidates by role and readiness, the max_model_len filter and its refusal,
the P/D split and what the prefill router sees, and the tie-break stream read ahead."""

from __future__ import annotations

import numpy as np

from gpuplane.serving.request import Request, RequestId, Segment
from gpuplane.serving.routing.dispatch import (
    DispatchBook,
    DispatchPolicy,
    EngineState,
    Refusal,
    Route,
    dispatch,
)
from gpuplane.serving.routing.dispatch_state import DispatchState, TieBreaks
from gpuplane.serving.routing.pd import PDSettings
from gpuplane.serving.routing.registry import make_router
from gpuplane.serving.routing.router import EngineView, Role

RR = DispatchPolicy(make_router("round-robin"), make_router("round-robin"), PDSettings(16))


def state(
    eid: str, role: Role = "both", max_len: int = 400, ready: bool = True, cached: int = 0
) -> EngineState:
    return EngineState(EngineView(eid, 0, 0, 0.0, 0, 0, 16, 0, cached), role, max_len, ready)


def req(prompt: int, max_tokens: int | None = None, session: str | None = None) -> Request:
    return Request(RequestId("r"), 0.0, prompt, 4, session_id=session, max_tokens=max_tokens)


def test_no_ready_engine_is_refused_without_a_draw() -> None:
    engines = (state("a", ready=False), state("b", ready=False))
    got = dispatch(req(10), engines, DispatchBook(0.0), RR)
    assert got == Route(None, "no ready engine", refusal=Refusal.NO_READY_ENGINE)
    assert dispatch(req(10), (), DispatchBook(0.0), RR).refusal is Refusal.NO_READY_ENGINE


def test_engines_too_short_are_left_out_and_a_prompt_too_long_for_all_is_refused() -> None:
    engines = (state("a", max_len=100), state("b", max_len=200))
    book = DispatchBook(0.0, rr_counter=0)
    assert dispatch(req(150), engines, book, RR).engine_id == "b"  # round robin would say a
    assert dispatch(req(99), engines, book, RR).engine_id == "a"  # 99 + 1 fits 100
    assert dispatch(req(90, max_tokens=20), engines, book, RR).engine_id == "b"  # vLLM's check
    long = dispatch(req(250), engines, book, RR)
    assert (long.engine_id, long.refusal, long.max_model_len) == (
        None,
        Refusal.PROMPT_TOO_LONG,
        200,
    )
    assert "max_model_len=100" in long.reason and long.num_tie_breaks == 0


def test_pd_splits_on_what_the_decode_engine_holds() -> None:
    engines = (
        state("d1", "decode", cached=0),
        state("d2", "decode", cached=96),
        state("p1", "prefill"),
        state("p2", "prefill"),
    )
    book = DispatchBook(0.0, rr_counter=0, tie_breaks=(0.3, 0.7))
    split = dispatch(req(100), engines, book, RR)
    # Round robin: d1 for the decode half (counter 0), p2 for the prefill half (counter 1).
    assert (split.engine_id, split.prefill_engine_id, split.num_tie_breaks) == ("d1", "p2", 2)
    whole = dispatch(req(100), engines, DispatchBook(0.0, rr_counter=1), RR)
    # d2 holds 96 of 100 prompt tokens: 4 to compute, under the threshold of 16.
    assert (whole.engine_id, whole.prefill_engine_id, whole.cached_tokens) == ("d2", None, 96)
    assert whole.num_tie_breaks == 1
    short = dispatch(req(10), engines, book, RR)
    assert short.prefill_engine_id is None
    # No prefill engine can take the prompt: the decode engine serves it whole.
    short_prefill = (*engines[:2], state("p1", "prefill", max_len=50))
    assert dispatch(req(100), short_prefill, book, RR).prefill_engine_id is None
    # Only prefill engines ready: nowhere to decode.
    alone = (state("d1", "decode", ready=False), state("p1", "prefill"))
    assert dispatch(req(100), alone, book, RR).refusal is Refusal.NO_READY_ENGINE


def test_dispatch_is_pure() -> None:
    engines = (state("a"), state("b"), state("p", "prefill"))
    book = DispatchBook(1.0, 3, None, 0, 0, (0.1, 0.9))
    first = dispatch(req(80, session="s"), engines, book, RR)
    assert first == dispatch(req(80, session="s"), engines, book, RR)
    assert first.engine_id == "b" and first.prefill_engine_id == "p"


def test_state_applies_a_route_as_the_routers_bookkeeping() -> None:
    policy = DispatchPolicy(make_router("llm-d"), make_router("llm-d"), PDSettings(16))
    st = DispatchState(seed=1)
    r = Request(RequestId("r"), 0.0, 64, 4, (Segment("sys", 48), Segment("u", 16)), session_id="s")
    chain = st.chain(r, policy)
    book = st.book(r, 0.0, policy, chain)
    assert book.total_blocks == 4 and book.session_engine is None
    st.apply(r, Route("d", prefill_engine_id="p", num_tie_breaks=2), policy, chain)
    assert st.rr == 2 and st.sessions == {"s": "p"}  # the prefill half was recorded last
    assert st.prefix_blocks("d", r, chain) == 4 and st.prefix_blocks("p", r, chain) == 4
    assert st.estimated_cached_tokens("d", r, chain) == 64


def test_tie_breaks_read_ahead_give_the_numbers_one_draw_each_would() -> None:
    direct = np.random.default_rng(7)
    ties = TieBreaks(np.random.default_rng(7))
    used = []
    for n in (1, 0, 2, 1, 1, 2, 0, 1):
        a, b = ties.next_two()
        used += [a, b][:n]
        ties.consume(n)
    assert used == [float(direct.random()) for _ in range(len(used))]
