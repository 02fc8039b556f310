"""The capacity seam and the closed-form reference model (Erlang C prefill, Little's-law decode)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.autoscaler.slo.analytic import AnalyticCapacity, erlang_c
from gpuplane.autoscaler.slo.capacity import (
    Corrections,
    LoadMix,
    PoolRole,
    Prediction,
    SloTargets,
    meets,
    sustainable_rps,
)
from tests.unit.autoscaler.test_slo_fixtures import CAPACITY

MIX = LoadMix(1000.0, 200.0)
TARGETS = SloTargets(2.0, 0.2)


def erlang_c_textbook(c: int, a: float) -> float:
    """The sum formula, for checking the recurrence."""
    top = a**c / math.factorial(c) * c / (c - a)
    return top / (sum(a**k / math.factorial(k) for k in range(c)) + top)


@pytest.mark.parametrize(("c", "a"), [(1, 0.5), (2, 1.0), (5, 3.0), (10, 9.5), (30, 12.0)])
def test_erlang_c_matches_the_textbook_formula(c: int, a: float) -> None:
    assert erlang_c(c, a) == pytest.approx(erlang_c_textbook(c, a), rel=1e-12)


def test_erlang_c_edges() -> None:
    assert erlang_c(1, 0.5) == pytest.approx(0.5)  # M/M/1: the chance to wait is rho
    assert erlang_c(2, 1.0) == pytest.approx(1 / 3)
    assert erlang_c(3, 0.0) == 0.0
    assert erlang_c(3, 3.0) == 1.0
    assert erlang_c(3, 7.0) == 1.0


def test_prefill_ttft_is_the_mm1_waiting_tail_plus_service() -> None:
    # S = 0.4 s, one replica at 1.5 req/s: rho 0.6, P(W > t) = 0.6 exp(-(2.5 - 1.5) t).
    p = CAPACITY.predict(PoolRole.PREFILL, 1, 1.5, MIX)
    assert p.itl_p99_s is None
    assert p.utilisation == pytest.approx(0.6)
    assert p.ttft_p90_s == pytest.approx(math.log(6.0) + 0.4)
    idle = CAPACITY.predict(PoolRole.PREFILL, 4, 0.1, MIX)
    assert idle.ttft_p90_s == pytest.approx(0.4)  # hardly anyone waits


def test_decode_batch_satisfies_littles_law() -> None:
    rate, replicas = 20.0, 2
    p = CAPACITY.predict(PoolRole.DECODE, replicas, rate, MIX)
    assert p.ttft_p90_s is None and p.itl_p99_s is not None
    batch = rate / replicas * MIX.mean_output_tokens * p.itl_p99_s
    assert CAPACITY.step_s(batch, MIX) == pytest.approx(p.itl_p99_s)


def test_decode_saturates_at_the_kv_or_sequence_limit() -> None:
    # 300k KV tokens / 1100 tokens per sequence = 272 > 256: max_num_seqs binds.
    assert CAPACITY.max_batch(MIX) == 256
    small_kv = AnalyticCapacity(2500.0, 0.01, 5e-8, kv_capacity_tokens=110_000.0)
    assert small_kv.max_batch(MIX) == pytest.approx(100.0)
    peak = 100.0 / small_kv.step_s(100.0, MIX) / MIX.mean_output_tokens  # req/s per replica
    assert small_kv.predict(PoolRole.DECODE, 1, peak * 0.99, MIX).utilisation < 1
    over = small_kv.predict(PoolRole.DECODE, 1, peak * 1.01, MIX)
    assert over.utilisation > 1 and over.itl_p99_s == math.inf


def test_unified_pool_time_shares_prefill_and_decode() -> None:
    p = CAPACITY.predict(PoolRole.UNIFIED, 3, 4.0, MIX)
    rho_p = CAPACITY.prefill_load(3, 4.0, MIX)
    rho_d = CAPACITY.decode_load(3, 4.0, MIX)
    assert p.utilisation == pytest.approx(rho_p + rho_d)
    alone = CAPACITY.predict(PoolRole.DECODE, 3, 4.0, MIX).itl_p99_s
    assert alone is not None and p.itl_p99_s is not None and p.itl_p99_s > alone


def test_tail_factor_scales_itl() -> None:
    tail = AnalyticCapacity(2500.0, 0.01, 5e-8, itl_tail_factor=2.0)
    a = CAPACITY.predict(PoolRole.DECODE, 1, 5.0, MIX).itl_p99_s
    b = tail.predict(PoolRole.DECODE, 1, 5.0, MIX).itl_p99_s
    assert a is not None and b == pytest.approx(2 * a)


def test_constructor_and_call_checks() -> None:
    with pytest.raises(ValueError, match="> 0"):
        AnalyticCapacity(0.0, 0.01, 5e-8)
    with pytest.raises(ValueError, match="itl_tail_factor"):
        AnalyticCapacity(1.0, 0.01, 5e-8, itl_tail_factor=0.5)
    with pytest.raises(ValueError, match="replicas must be >= 1"):
        CAPACITY.predict(PoolRole.DECODE, 0, 1.0, MIX)


def test_meets_checks_the_roles_own_latencies() -> None:
    fine = Prediction(1.0, 0.1, 0.5)
    slow_ttft = Prediction(3.0, 0.1, 0.5)
    slow_itl = Prediction(1.0, 0.3, 0.5)
    none = Corrections()
    assert meets(PoolRole.UNIFIED, fine, TARGETS, none)
    assert not meets(PoolRole.UNIFIED, slow_ttft, TARGETS, none)
    assert meets(PoolRole.DECODE, slow_ttft, TARGETS, none)
    assert not meets(PoolRole.DECODE, slow_itl, TARGETS, none)
    assert meets(PoolRole.PREFILL, slow_itl, TARGETS, none)
    assert not meets(PoolRole.UNIFIED, fine, TARGETS, Corrections(ttft=2.5))
    assert not meets(PoolRole.UNIFIED, Prediction(1.0, 0.1, 1.0), TARGETS, none)  # saturated
    assert not meets(PoolRole.UNIFIED, Prediction(math.nan, 0.1, 0.5), TARGETS, none)
    assert not meets(PoolRole.UNIFIED, Prediction(1.0, 0.1, math.nan), TARGETS, none)
    with pytest.raises(ValueError, match="decode pool"):
        meets(PoolRole.DECODE, Prediction(1.0, None, 0.5), TARGETS, none)


def test_sustainable_rate_is_read_off_the_utilisation() -> None:
    assert sustainable_rps(CAPACITY, PoolRole.PREFILL, 3, MIX, 1.0) == pytest.approx(3 / 0.4)
    assert sustainable_rps(CAPACITY, PoolRole.PREFILL, 0, MIX, 1.0) == 0.0


# --- prompt-length tails: TTFT p90 and prefill stalls in the decode stream ------------------

# A chat-like mix: most prompts near 1000 tokens, a tenth of them 3000-4000.
CHAT = LoadMix(
    1200.0,
    200.0,
    ((0.0, 100.0), (0.5, 1000.0), (0.9, 3000.0), (0.99, 4000.0), (1.0, 8000.0)),
)
# Figures of a 70B-class model on four H100-class GPUs: 14k prefill tokens/s, 17 ms decode steps.
BIG = AnalyticCapacity(
    prefill_tokens_per_s=14_000.0,
    decode_base_step_s=0.017,
    decode_step_per_kv_token_s=2.2e-8,
    kv_capacity_tokens=1_000_000.0,
    max_num_batched_tokens=8192,
)


def test_load_mix_quantiles_interpolate_and_are_checked() -> None:
    assert CHAT.prompt_tokens_at(0.5) == 1000.0
    assert CHAT.prompt_tokens_at(0.7) == pytest.approx(2000.0)
    assert CHAT.prompt_tokens_at(-1.0) == 100.0 and CHAT.prompt_tokens_at(2.0) == 8000.0
    assert MIX.prompt_tokens_at(0.99) == 1000.0  # no points: the mean
    with pytest.raises(ValueError, match="increasing"):
        LoadMix(1.0, 1.0, ((0.9, 5.0), (0.5, 6.0)))
    with pytest.raises(ValueError, match="non-decreasing"):
        LoadMix(1.0, 1.0, ((0.5, 5.0), (0.9, 4.0)))


def test_ttft_p90_is_the_prefill_of_a_90th_percentile_prompt() -> None:
    prefill = BIG.predict(PoolRole.PREFILL, 8, 0.5, CHAT).ttft_p90_s
    assert prefill == pytest.approx(3000.0 / 14_000.0)
    unified = BIG.predict(PoolRole.UNIFIED, 8, 0.5, CHAT).ttft_p90_s
    assert prefill is not None and unified is not None
    assert prefill < unified < prefill + 0.02  # + a step


def test_itl_p99_is_a_decode_step_stalled_by_a_prompt() -> None:
    """With one prompt per replica per second and ~55 decode steps per second, about 1.8 % of
    the steps carry a prompt, so the 99th-percentile gap is a step stalled by the prompt of the
    1 - 0.01/0.018 = 45th percentile."""
    p = BIG.predict(PoolRole.UNIFIED, 4, 4.0, CHAT)
    assert p.itl_p99_s is not None
    step = BIG.predict(PoolRole.DECODE, 4, 4.0, CHAT).itl_p99_s
    assert step is not None and step < 0.025
    assert 800.0 / 14_000.0 < p.itl_p99_s - step < 1000.0 / 14_000.0
    # Fewer prompts per replica: the stalls drop below 1 % and the tail is a plain step.
    quiet = BIG.predict(PoolRole.UNIFIED, 16, 4.0, CHAT).itl_p99_s
    assert quiet is not None and quiet < 0.03
    # More prompts per replica: the tail moves to the long prompts.
    busy = BIG.predict(PoolRole.UNIFIED, 1, 4.0, CHAT).itl_p99_s
    assert busy is not None and busy > 3000.0 / 14_000.0


def test_the_token_budget_caps_a_stall() -> None:
    long = LoadMix(6000.0, 100.0, ((0.0, 4000.0), (1.0, 8000.0)))
    whole = replace(BIG, max_num_batched_tokens=None).predict(PoolRole.UNIFIED, 1, 1.0, long)
    chunked = replace(BIG, max_num_batched_tokens=2048).predict(PoolRole.UNIFIED, 1, 1.0, long)
    assert whole.itl_p99_s is not None and chunked.itl_p99_s is not None
    assert chunked.itl_p99_s < 2048 / 14_000.0 + 0.03 < whole.itl_p99_s


def test_a_decode_pool_has_no_prefill_stalls() -> None:
    short = LoadMix(1200.0, 200.0, ((0.0, 1200.0), (1.0, 1200.0)))
    a = BIG.predict(PoolRole.DECODE, 2, 6.0, CHAT).itl_p99_s
    b = BIG.predict(PoolRole.DECODE, 2, 6.0, short).itl_p99_s
    assert a == b


rates = st.floats(min_value=0.0, max_value=60.0)
roles = st.sampled_from(list(PoolRole))
tails = st.lists(st.floats(min_value=1.0, max_value=9000.0), min_size=0, max_size=5).map(
    lambda ts: tuple(zip((0.0, 0.5, 0.9, 0.99, 1.0), sorted(ts), strict=False))
)
mixes = st.builds(
    LoadMix,
    st.floats(min_value=1.0, max_value=8000.0),
    st.floats(min_value=1.0, max_value=2000.0),
    tails,
)
models = st.sampled_from([CAPACITY, BIG, replace(BIG, max_num_batched_tokens=None)])


def _le(a: float | None, b: float | None) -> bool:
    assert a is not None and b is not None
    return a <= b * (1 + 1e-9) or b == math.inf


@settings(max_examples=300, deadline=None)
@given(roles, st.integers(1, 40), rates, rates, mixes, models)
def test_predictions_do_not_worsen_with_replicas_or_improve_with_rate(
    role: PoolRole, n: int, r1: float, r2: float, mix: LoadMix, model: AnalyticCapacity
) -> None:
    lo, hi = sorted((r1, r2))
    few, more = model.predict(role, n, hi, mix), model.predict(role, n + 1, hi, mix)
    light = model.predict(role, n, lo, mix)
    assert more.utilisation <= few.utilisation and light.utilisation <= few.utilisation
    if role is not PoolRole.DECODE:
        assert _le(more.ttft_p90_s, few.ttft_p90_s) and _le(light.ttft_p90_s, few.ttft_p90_s)
    if role is not PoolRole.PREFILL:
        assert _le(more.itl_p99_s, few.itl_p99_s) and _le(light.itl_p99_s, few.itl_p99_s)
    # Latencies are finite exactly when the pool is stable.
    finite = all(v is None or math.isfinite(v) for v in (few.ttft_p90_s, few.itl_p99_s))
    assert finite == (few.utilisation < 1) or math.isclose(few.utilisation, 1.0)
