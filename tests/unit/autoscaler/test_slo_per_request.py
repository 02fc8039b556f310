"""The per-request form of the SLO scaler's objective: a share of requests with TTFT and mean
TPOT within thresholds, sized from the capacity model's wait-time tail and step times."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from gpuplane.autoscaler.slo.capacity import (
    Corrections,
    LoadMix,
    PoolRole,
    SloTargets,
    meets_at,
)
from gpuplane.autoscaler.slo.need import smallest_meeting
from gpuplane.autoscaler.slo.per_request import poisson_cdf, tpot_share, ttft_share
from gpuplane.autoscaler.slo.settings import SloScalerSettings, settings_from_dict
from gpuplane.core.errors import InputError
from gpuplane.live.scaler.metadata import MetadataError, parse_metadata
from tests.unit.autoscaler.test_slo_fixtures import CAPACITY, decide_one, flat, make_pool
from tests.unit.live.scaler.test_scaler_reading import BASE

MIX = LoadMix(1000.0, 200.0, ((0.0, 200.0), (0.5, 900.0), (0.9, 2000.0), (1.0, 4000.0)))
PER_REQUEST = SloScalerSettings(objective="per_request")


def share(n: int, rate: float, ttft: float = 2.0, tpot: float = 0.2) -> float:
    return CAPACITY.request_attainment(PoolRole.UNIFIED, n, rate, MIX, ttft, tpot)


def test_poisson_cdf_matches_the_closed_form() -> None:
    assert poisson_cdf(2, 1.0) == pytest.approx(math.exp(-1.0) * 2.5)
    assert poisson_cdf(0, 3.0) == pytest.approx(math.exp(-3.0))
    assert poisson_cdf(-1, 3.0) == 0.0
    assert poisson_cdf(5.9, 0.0) == 1.0
    assert poisson_cdf(1000, 4.0) == 1.0


def test_share_is_monotone_in_replicas_and_rate() -> None:
    shares = [share(n, 12.0) for n in range(1, 21)]
    assert all(0.0 <= s <= 1.0 for s in shares)
    assert shares == sorted(shares)
    assert shares[0] == 0.0  # 12 req/s saturate one replica
    assert shares[-1] > 0.99
    by_rate = [share(8, r) for r in (1.0, 4.0, 8.0, 12.0, 16.0)]
    assert by_rate == sorted(by_rate, reverse=True)


def test_terms_follow_their_thresholds() -> None:
    # A TTFT threshold below a long prompt's own prefill excludes the long prompts.
    tight = ttft_share(CAPACITY, PoolRole.UNIFIED, 20, 1.0, MIX, 0.5)
    loose = ttft_share(CAPACITY, PoolRole.UNIFIED, 20, 1.0, MIX, 5.0)
    assert 0.0 < tight < loose == pytest.approx(1.0, abs=1e-6)
    # A TPOT threshold below the decode step itself: nobody meets it.
    assert tpot_share(CAPACITY, PoolRole.UNIFIED, 4, 4.0, MIX, 0.001) == 0.0
    # A decode pool's TPOT has no prefill stalls; a prefill pool answers for TTFT only.
    assert tpot_share(CAPACITY, PoolRole.DECODE, 4, 4.0, MIX, 0.2) == 1.0
    prefill_only = CAPACITY.request_attainment(PoolRole.PREFILL, 4, 4.0, MIX, 2.0, 1e-6)
    assert prefill_only == ttft_share(CAPACITY, PoolRole.PREFILL, 4, 4.0, MIX, 2.0)


def test_burstier_arrivals_lower_the_ttft_share() -> None:
    bursty = replace(MIX, arrival_scv=8.0)
    plain = ttft_share(CAPACITY, PoolRole.UNIFIED, 6, 12.0, MIX, 2.0)
    assert ttft_share(CAPACITY, PoolRole.UNIFIED, 6, 12.0, bursty, 2.0) < plain


def test_a_stricter_target_needs_more_replicas() -> None:
    pool = make_pool(rates=flat(12.0), prompt=1000.0, output=200.0)
    counts = []
    for target in (0.5, 0.9, 0.95, 0.99, 0.999):
        targets = SloTargets(2.0, 0.2, target)
        counts.append(smallest_meeting(pool, 12.0, targets, Corrections())[0])
    assert counts == sorted(counts)
    assert counts[0] < counts[-1]


def test_corrections_stretch_the_latencies() -> None:
    pool = make_pool(rates=flat(12.0))
    targets = SloTargets(2.0, 0.2, 0.95)
    plain = smallest_meeting(pool, 12.0, targets, Corrections())[0]
    slow = smallest_meeting(pool, 12.0, targets, Corrections(ttft=3.0, itl=2.0))[0]
    assert slow > plain


def test_meets_at_keeps_the_percentile_form_by_default() -> None:
    mix = make_pool().signals.mix
    for n in (2, 5, 9):
        p = CAPACITY.predict(PoolRole.UNIFIED, n, 12.0, mix)
        expected = p.utilisation < 1 and p.ttft_p90_s <= 2.0 and p.itl_p99_s <= 0.2  # type: ignore[operator]
        got = meets_at(
            CAPACITY, PoolRole.UNIFIED, n, 12.0, mix, SloTargets(2.0, 0.2), Corrections()
        )
        assert got == expected


def test_per_request_is_cheaper_than_the_itl_tail_here() -> None:
    # Each replica's prompts stall decode; the ITL p99 sees every stall, a request's mean TPOT
    # over 200 tokens averages them out: the per-request form needs fewer replicas.
    # (A 256-token chunk stalls a step for ~0.11 s: over an ITL objective of 100 ms.)
    pool = make_pool(rates=flat(12.0))
    fast = SloScalerSettings(itl_p99_s=0.1)
    tail = decide_one(pool, fast).numbers.needed_slo
    per_request = decide_one(pool, fast.model_copy(update={"objective": "per_request"}))
    assert per_request.numbers.needed_slo < tail
    up = decide_one(replace(pool, replicas=replace(pool.replicas, ready=6)), PER_REQUEST)
    assert up.numbers.binding == "slo" and up.desired_replicas > 6
    assert "0.95 of requests with TTFT <= 2 s and mean TPOT <= 0.2 s" in up.reason


def test_the_scaler_sizes_for_the_target_share() -> None:
    pool = make_pool(rates=flat(12.0))
    loose = decide_one(pool, PER_REQUEST.model_copy(update={"request_attainment": 0.8}))
    strict = decide_one(pool, PER_REQUEST.model_copy(update={"request_attainment": 0.999}))
    assert loose.numbers.needed_slo < strict.numbers.needed_slo
    # The chosen count meets the target under the model; one fewer does not.
    n, rate = strict.numbers.needed_slo, strict.numbers.forecast_rps
    mix = pool.signals.mix
    assert CAPACITY.request_attainment(PoolRole.UNIFIED, n, rate, mix, 2.0, 0.2) >= 0.999
    assert CAPACITY.request_attainment(PoolRole.UNIFIED, n - 1, rate, mix, 2.0, 0.2) < 0.999


def test_settings_check_the_objective() -> None:
    with pytest.raises(InputError) as err:
        settings_from_dict({"objective": "p95"})
    assert err.value.location.field == "objective"
    with pytest.raises(InputError) as err:
        settings_from_dict({"objective": "per_request", "request_attainment": 1.0})
    assert err.value.location.field == "request_attainment"
    s = settings_from_dict({"objective": "per_request", "request_attainment": 0.9})
    assert s.targets() == SloTargets(2.0, 0.2, 0.9)
    assert SloScalerSettings().targets().request_attainment is None
    with pytest.raises(ValueError, match="request_attainment"):
        SloTargets(2.0, 0.2, 1.5)


def test_scaler_metadata_reaches_the_objective() -> None:
    settings = json.dumps({"objective": "per_request", "request_attainment": 0.99})
    config = parse_metadata(dict(BASE, settings=settings), "llm")
    assert config.settings.objective == "per_request"
    assert config.settings.sized(config.slo).request_attainment == 0.99
    with pytest.raises(MetadataError, match="objective"):
        parse_metadata(dict(BASE, settings='{"objective": "mean"}'), "llm")


def test_clumped_arrivals_need_more_replicas() -> None:
    # At 6 req/s a Poisson stream hardly queues; the same rate in clumps of ~10 (c_a² = 19)
    # makes a request wait for the rest of its clump.
    targets = SloTargets(2.0, 0.2, 0.95)
    plain = make_pool(rates=flat(6.0))
    clumped = make_pool(rates=flat(6.0), arrival_scv=19.0)
    n_plain = smallest_meeting(plain, 6.0, targets, Corrections())[0]
    n_clumped = smallest_meeting(clumped, 6.0, targets, Corrections())[0]
    assert n_clumped > n_plain
    mix = clumped.signals.mix
    assert ttft_share(CAPACITY, PoolRole.UNIFIED, n_plain, 6.0, mix, 2.0) < 0.95


def test_short_answers_are_hurt_more_by_stalls() -> None:
    # The same stall rate per decode step: a 10-token answer breaks its mean TPOT with one or
    # two stalls, a 500-token answer averages them out.
    short = replace(MIX, mean_output_tokens=10.0)
    long = replace(MIX, mean_output_tokens=500.0)
    tight = 0.05
    assert tpot_share(CAPACITY, PoolRole.UNIFIED, 4, 6.0, short, tight) < tpot_share(
        CAPACITY, PoolRole.UNIFIED, 4, 6.0, long, tight
    )
