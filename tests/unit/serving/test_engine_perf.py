"""The engine's shortcuts against the plain computations they replace: identical results."""

from __future__ import annotations

import math
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.serving.engine.kv_cache import CacheNode, KVCache, KVHolding
from gpuplane.serving.engine.stats import EngineStats, ItlSamples
from gpuplane.serving.metrics.histogram import SMALL_BATCH, Histogram
from gpuplane.serving.request import Segment

BOUNDS = (0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 1.0)


def observed_one_by_one(values: list[float], weight: int) -> Histogram:
    """What ``observe_list`` replaces: the loop over the values."""
    h = Histogram(BOUNDS)
    total = 0.0
    for v in values:
        h.counts[sum(1 for b in BOUNDS if b < v) if v == v else 0] += weight
        total += v
    h.sum += total * weight
    h.count += len(values) * weight
    return h


def same_histogram(a: Histogram, b: Histogram) -> bool:
    sums_equal = a.sum == b.sum or (math.isnan(a.sum) and math.isnan(b.sum))
    return a.counts == b.counts and a.count == b.count and sums_equal


values = st.lists(
    st.one_of(
        st.floats(0.0, 2.0),
        st.sampled_from([*BOUNDS, 0.0095, 0.0105, math.inf, math.nan]),
    ),
    min_size=0,
    max_size=SMALL_BATCH,
)


@settings(max_examples=200, deadline=None)
@given(values=values, weight=st.integers(0, 50))
def test_observe_list_equals_observing_one_by_one(values: list[float], weight: int) -> None:
    h = Histogram(BOUNDS)
    h.observe_list(values, weight)
    want = observed_one_by_one(values, weight) if weight else Histogram(BOUNDS)
    assert same_histogram(h, want)


@settings(max_examples=100, deadline=None)
@given(
    gaps=st.lists(st.floats(0.0005, 0.2), min_size=0, max_size=SMALL_BATCH + 5),
    weight=st.integers(1, 40),
)
def test_itl_steps_equal_the_numpy_diff_of_the_step_ends(gaps: list[float], weight: int) -> None:
    ends = [1.0]
    for g in gaps:
        ends.append(ends[-1] + g)
    fast, slow = EngineStats("vllm", 4096), EngineStats("vllm", 4096)
    fast.itl_steps(ends, weight)
    slow.itl_many(np.diff(np.asarray(ends, dtype=np.float64)), weight)
    assert same_histogram(fast.itl, slow.itl)
    assert fast.itl_samples is not None and slow.itl_samples is not None
    for a, b in zip(fast.itl_samples.arrays(), slow.itl_samples.arrays(), strict=True):
        assert a.tolist() == b.tolist()


def test_itl_samples_keep_every_value_with_its_weight() -> None:
    samples = ItlSamples()
    want_values: list[float] = []
    want_weights: list[int] = []
    rng = np.random.default_rng(3)
    for _ in range(300):
        kind, weight = int(rng.integers(0, 3)), int(rng.integers(0, 4))
        vals = [float(v) for v in rng.random(int(rng.integers(0, 6)))]
        if kind == 0:
            for v in vals:
                samples.add(v, weight)
                want_values.append(v)
                want_weights.append(weight)
        elif kind == 1:
            samples.add_list(vals, weight)
        else:
            samples.add_many(np.asarray(vals), weight)
        if kind and weight > 0:
            want_values += vals
            want_weights += [weight] * len(vals)
    got_values, got_weights = samples.arrays()
    assert got_values.tolist() == want_values
    assert got_weights.dtype == np.int64 and got_weights.tolist() == want_weights


# -- the KV pool's deferred takes ------------------------------------------------------------
def structure(cache: KVCache) -> tuple[object, ...]:
    """Everything the pool keeps: the free queue's runs and every cache node's state."""
    cache._settle()
    queue = [(r.node.key if r.node else None, r.lo, r.hi) for r in cache._queue]
    nodes = []
    stack: list[tuple[tuple[object, ...], CacheNode]] = [((), cache.root)]
    while stack:
        path, node = stack.pop()
        nodes.append((path, node.cached, sorted(node.holders.items()), node.num_blocks))
        for key, child in sorted(node.children.items()):
            stack.append(((*path, key), child))
    return cache.num_free, queue, nodes


SEGMENTS = [Segment("sys", 40), Segment("doc", 37), Segment("q", 20)]
KV_OPS = ["admit", "admit", "grow", "take", "release", "register", "match"]


def test_deferred_takes_leave_the_pool_as_taking_at_once() -> None:
    """One pool applies every take to its free queue at once (settling right away), the other
    only when something next looks at the queue: they must agree on everything. Random
    operation sequences on a small pool (so takes soon reach cached free blocks)."""
    for seed in range(250):
        rng = random.Random(seed)
        ops = [
            (rng.choice(KV_OPS), rng.randint(0, 2), rng.randint(0, 9))
            for _ in range(rng.randint(1, 80))
        ]
        compare_pools(ops, rng.choice([1, 4, 16]))


def compare_pools(ops: list[tuple[str, int, int]], bs: int) -> None:
    blocks = 14 * (16 // bs)  # small: takes soon reach the cached free blocks
    lazy, eager = KVCache(blocks, bs, True), KVCache(blocks, bs, True)
    held: list[tuple[KVHolding, KVHolding, tuple[Segment, ...], int]] = []
    seen: list[tuple[Segment, ...]] = []
    for n, (op, k, amount) in enumerate(ops):
        if op == "admit":
            content = (*SEGMENTS[: k + 1], Segment(f"own{n % 7}", 11))
            seen.append(content)
            tokens = sum(s.num_tokens for s in content) - 1
            hits = [c.match_blocks(content, tokens) for c in (lazy, eager)]
            assert hits[0] == hits[1]
            plans = [
                c.plan_admission(content, tokens, tokens - hits[0] * bs) for c in (lazy, eager)
            ]
            assert plans[0].blocks_needed == plans[1].blocks_needed
            if plans[0].blocks_needed <= lazy.num_free:
                pair = (lazy.admit(content, plans[0]), eager.admit(content, plans[1]))
                eager._settle()
                held.append((*pair, content, tokens))
        elif op == "grow" and held:
            a, b, _, _ = held[amount % len(held)]
            assert lazy.grow(a, k) == eager.grow(b, k)
            eager._settle()
        elif op == "take" and held and amount <= lazy.num_free:
            # As Engine.observe and commit take the blocks of decode steps for the group and
            # the decoders' holdings grow by them later.
            a, b, _, _ = held[k % len(held)]
            for cache, holding in ((lazy, a), (eager, b)):
                cache.take_free(amount)
                holding.num_blocks += amount
            eager._settle()
        elif op == "register" and held:
            a, b, _, tokens = held[amount % len(held)]
            lazy.register(a, tokens)
            eager.register(b, tokens)
        elif op == "release" and held:
            a, b, _, _ = held.pop(amount % len(held))
            lazy.release(a)
            eager.release(b)
        elif op == "match" and seen:  # also the content of requests that left
            content = seen[amount % len(seen)]
            assert lazy.match_blocks(content, 200) == eager.match_blocks(content, 200)
        assert lazy.num_free == eager.num_free
    assert structure(lazy) == structure(eager)
    for a, b, _, _ in held:
        lazy.release(a)
        eager.release(b)
    assert structure(lazy) == structure(eager)
    lazy.check_invariants()


def test_a_deferred_take_still_evicts_before_the_next_lookup() -> None:
    """Blocks taken from the front of the free queue evict the cache entries they held, even
    though the queue is only updated when something next looks at it."""
    cache = KVCache(8, 4, True)
    content = (Segment("doc", 16), Segment("own", 4))
    plan = cache.plan_admission(content, 17, 17)
    holding = cache.admit(content, plan)
    cache.register(holding, 17)
    cache.release(holding)  # 4 cached blocks of "doc", free, at the back of the queue
    assert cache.match_blocks(content, 17) == 4
    cache.take_free(8)  # the whole pool: the oldest free blocks first, then the cached ones
    assert cache.num_free == 0
    assert cache.match_blocks(content, 17) == 0
    cache.check_invariants()
