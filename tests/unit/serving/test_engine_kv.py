"""The aggregated KV cache against the per-block reference, and vLLM's block rules."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.serving.engine.kv_cache import KVCache, KVHolding
from gpuplane.serving.engine.kv_reference import ReferenceKVCache
from gpuplane.serving.request import Segment

VOCAB = [Segment("sys", 40), Segment("doc", 37), Segment("q1", 20), Segment("q2", 9)]


def content(path: tuple[int, ...], tail: str) -> tuple[Segment, ...]:
    return (*(VOCAB[i] for i in path), Segment(tail, 30))


@dataclass
class Live:
    content: tuple[Segment, ...]
    computed: int
    holdings: list[KVHolding] = field(default_factory=list)


ops = st.lists(
    st.tuples(
        st.sampled_from(["admit", "grow", "release"]),
        st.lists(st.integers(0, 3), min_size=0, max_size=3),
        st.integers(0, 40),
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(ops=ops, blocks=st.integers(12, 40), bs=st.sampled_from([1, 4, 16]))
def test_aggregated_cache_matches_per_block_reference(
    ops: list[tuple[str, list[int], int]], blocks: int, bs: int
) -> None:
    caches: list[KVCache | ReferenceKVCache] = [
        KVCache(blocks * (16 // bs), bs, True),
        ReferenceKVCache(blocks * (16 // bs), bs, True),
    ]
    live: list[Live] = []
    for n, (op, path, k) in enumerate(ops):
        if op == "admit":
            c = content(tuple(path), f"own{n}")
            num_tokens = sum(s.num_tokens for s in c[:-1]) + 1
            hits = [cache.match_blocks(c, num_tokens) for cache in caches]
            assert hits[0] == hits[1]
            new = num_tokens - hits[0] * bs
            plans = [cache.plan_admission(c, num_tokens, new) for cache in caches]
            assert plans[0].blocks_needed == plans[1].blocks_needed
            if plans[0].blocks_needed <= caches[0].num_free:
                item = Live(c, num_tokens)
                for cache, plan in zip(caches, plans, strict=True):
                    h = cache.admit(c, plan)
                    cache.register(h, num_tokens)
                    item.holdings.append(h)
                live.append(item)
        elif op == "grow" and live:
            item = live[k % len(live)]
            extra = min(k, 40)
            need = -(-(item.computed + extra) // bs) - item.holdings[0].num_blocks
            ok = [cache.grow(h, need) for cache, h in zip(caches, item.holdings, strict=True)]
            assert ok[0] == ok[1]
            if ok[0]:
                item.computed += extra
                for cache, h in zip(caches, item.holdings, strict=True):
                    cache.register(h, item.computed)
        elif op == "release" and live:
            item = live.pop(k % len(live))
            for cache, h in zip(caches, item.holdings, strict=True):
                cache.register(h, item.computed)
                cache.release(h)
        for cache in caches:
            cache.check_invariants()
        assert caches[0].num_free == caches[1].num_free
        for probe in [(), (0,), (0, 2), (1, 3), (0, 1, 2)]:
            c = content(probe, "probe")
            t = sum(s.num_tokens for s in c)
            assert caches[0].match_blocks(c, t) == caches[1].match_blocks(c, t)
    for item in live:
        for cache, h in zip(caches, item.holdings, strict=True):
            cache.release(h)
    assert caches[0].num_free == caches[0].num_blocks == caches[1].num_free


def test_hit_leaves_one_token_to_compute() -> None:
    kv = KVCache(10, 16, True)
    c = (Segment("p", 32), Segment("out", 5))
    h = kv.admit(c, kv.plan_admission(c, 32, 32))
    kv.register(h, 32)
    kv.release(h)
    assert kv.match_blocks(c, 32) == 1  # not 2: the last token must be computed
    assert kv.match_blocks(c, 33) == 2


def test_freed_blocks_stay_cached_until_reused_deepest_first() -> None:
    kv = KVCache(6, 16, True)
    c = (Segment("a", 64), Segment("out", 1))
    h = kv.admit(c, kv.plan_admission(c, 65, 65))
    kv.register(h, 64)
    kv.release(h)
    assert kv.num_free == 6 and kv.usage() == 0.0  # cached blocks count as free
    assert kv.match_blocks(c, 65) == 4
    other = (Segment("b", 16), Segment("o2", 1))
    kv.admit(other, kv.plan_admission(other, 17, 17))  # 2 blocks: the untouched ones first
    assert kv.match_blocks(c, 65) == 4
    more = (Segment("c", 16), Segment("o3", 1))
    kv.admit(more, kv.plan_admission(more, 17, 17))  # now a's tail block is evicted
    assert kv.match_blocks(c, 65) == 2
    assert kv.usage() == pytest.approx(4 / 6)


def test_a_hit_on_free_cached_blocks_uses_free_blocks() -> None:
    kv = KVCache(8, 16, True)
    c = (Segment("a", 48), Segment("x", 10))
    h = kv.admit(c, kv.plan_admission(c, 58, 58))
    kv.register(h, 58)
    kv.release(h)
    d = (Segment("a", 48), Segment("y", 20))
    plan = kv.plan_admission(d, 68, 68 - 48)
    assert (plan.hit_blocks, plan.evictable_hits, plan.new_blocks) == (3, 3, 2)
    kv.admit(d, plan)
    assert kv.num_free == 8 - 5
