"""Routers as pure functions of a snapshot."""

from __future__ import annotations

from typing import Any

import pytest

from gpuplane.serving.request import Request, RequestId, Segment
from gpuplane.serving.routing.basic import LeastOutstandingRouter, RoundRobinRouter
from gpuplane.serving.routing.prefix_index import PrefixIndex
from gpuplane.serving.routing.router import (
    NEEDS_PRECISE_PREFIX,
    NEEDS_PREFIX_INDEX,
    EngineView,
    RoutingSnapshot,
)
from gpuplane.serving.routing.scorers import KvCostRouter, WeightedScorerRouter
from gpuplane.serving.routing.session_affinity import SessionAffinityRouter, ring_owner

REQ = Request(RequestId("q"), 0.0, 320, 10, (Segment("sys", 160), Segment("u", 160)))


def view(eid: str, **kw: Any) -> EngineView:
    base: dict[str, Any] = {
        "num_waiting": 0,
        "num_running": 0,
        "kv_usage": 0.0,
        "outstanding": 0,
    }
    base.update(kw)
    return EngineView(eid, **base)


def snap(*views: EngineView, request: Request = REQ, **kw: Any) -> RoutingSnapshot:
    return RoutingSnapshot(0.0, request, tuple(views), **kw)


def test_round_robin_cycles_in_engine_order() -> None:
    views = (view("a"), view("b"), view("c"))
    picks = [RoundRobinRouter().decide(snap(*views, rr_counter=k)).engine_id for k in range(5)]
    assert picks == ["a", "b", "c", "a", "b"]
    assert RoundRobinRouter().decide(snap()).engine_id is None


def test_least_outstanding_breaks_ties_with_the_draw() -> None:
    views = (view("a", outstanding=3), view("b", outstanding=1), view("c", outstanding=1))
    router = LeastOutstandingRouter()
    assert router.decide(snap(*views, tie_break=0.1)).engine_id == "b"
    assert router.decide(snap(*views, tie_break=0.9)).engine_id == "c"


def test_session_ring_moves_only_the_removed_engines_sessions() -> None:
    engines = ("e0", "e1", "e2", "e3", "e4")
    owners = {f"s{i}": ring_owner(f"s{i}", engines) for i in range(2000)}
    assert len(set(owners.values())) == 5
    after = {s: ring_owner(s, ("e0", "e1", "e3", "e4")) for s in owners}
    moved = {s for s in owners if owners[s] != after[s]}
    assert moved == {s for s in owners if owners[s] == "e2"}
    req = Request(RequestId("t"), 0.0, 10, 1, session_id="s7")
    views = tuple(view(e) for e in engines)
    assert SessionAffinityRouter().decide(snap(*views, request=req)).engine_id == owners["s7"]


def test_llm_d_scorers_and_default_weights() -> None:
    views = (
        view("a", num_waiting=4, kv_usage=0.2, prefix_blocks=0),
        view("b", num_waiting=0, kv_usage=0.9, prefix_blocks=10),
        view("c", num_waiting=2, kv_usage=0.5, prefix_blocks=20),
    )
    router = WeightedScorerRouter()
    assert router.needs == frozenset({NEEDS_PREFIX_INDEX})
    scores = router.scores(snap(*views, total_blocks=20))
    # queue 2 x (0, 1, 0.5) + kv 2 x (0.8, 0.1, 0.5) + prefix 3 x (0, 0.5, 1)
    assert scores == pytest.approx([1.6, 3.7, 5.0])
    assert router.decide(snap(*views, total_blocks=20)).engine_id == "c"
    load_only = WeightedScorerRouter(weights={"queue": 1.0, "kv-cache-utilization": 1.0})
    assert load_only.needs == frozenset()
    assert load_only.decide(snap(*views)).engine_id == "b"


def test_precise_prefix_uses_engine_cache_state() -> None:
    views = (view("a", cached_tokens=0), view("b", cached_tokens=160))
    router = WeightedScorerRouter(weights={"prefix-cache": 1.0}, precise=True)
    assert router.needs == frozenset({NEEDS_PRECISE_PREFIX})
    assert router.decide(snap(*views)).engine_id == "b"


def test_dynamo_cost_weighs_uncached_prefill_against_active_blocks() -> None:
    views = (
        view("a", cached_tokens=320, used_blocks=100),  # cost 0 + 100
        view("b", cached_tokens=0, used_blocks=60),  # cost 20 + 60
    )
    assert KvCostRouter().decide(snap(*views)).engine_id == "b"
    assert KvCostRouter(overlap_weight=3.0).decide(snap(*views)).engine_id == "a"


def test_prefix_index_matches_leading_segments_and_evicts_prefixes_first() -> None:
    index = PrefixIndex(capacity_blocks=25)
    chain = index.chain(REQ)
    assert index.total_blocks(chain) == 20
    assert index.matched_blocks("e0", chain) == 0
    index.record("e0", chain)
    assert index.matched_blocks("e0", chain) == 20
    other = Request(RequestId("o"), 0.0, 200, 1, (Segment("sys", 160), Segment("v", 40)))
    assert index.matched_blocks("e0", index.chain(other)) == 10
    index.record("e0", index.chain(Request(RequestId("z"), 0.0, 160, 1)))  # 10 more blocks
    assert index.matched_blocks("e0", chain) == 0  # the shared prefix went first (LRU)
    index.forget("e0")
    assert index.matched_blocks("e0", index.chain(other)) == 0
