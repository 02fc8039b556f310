"""Synthetic arrivals, lengths and sessions: right statistics, same output from the same seed."""

from __future__ import annotations

import numpy as np
import pytest

from gpuplane.core.errors import InputError
from gpuplane.serving.traffic.generators import (
    EmpiricalLengths,
    LognormalLengths,
    gamma_arrivals,
    poisson_arrivals,
    synthetic_trace,
)
from gpuplane.serving.traffic.sessions import SessionSpec, generate_sessions
from gpuplane.serving.traffic.trace import Trace


def test_poisson_rate_and_cv() -> None:
    arr = poisson_arrivals(50.0, np.random.default_rng(0), duration_s=200.0)
    gaps = np.diff(arr)
    assert len(arr) == pytest.approx(10_000, rel=0.05)
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, abs=0.05)
    assert arr[-1] < 200.0


def test_gamma_cv_controls_burstiness() -> None:
    arr = gamma_arrivals(10.0, 3.0, np.random.default_rng(1), count=20_000)
    gaps = np.diff(arr)
    assert 1 / gaps.mean() == pytest.approx(10.0, rel=0.1)
    assert gaps.std() / gaps.mean() == pytest.approx(3.0, rel=0.1)
    with pytest.raises(InputError):
        gamma_arrivals(10.0, 1.0, np.random.default_rng(1))
    with pytest.raises(InputError):
        gamma_arrivals(-1.0, 1.0, np.random.default_rng(1), count=3)


def test_same_seed_same_traffic_and_other_seed_other_traffic() -> None:
    def make(seed: int) -> Trace:
        rng = np.random.default_rng(seed)
        arr = gamma_arrivals(5.0, 2.0, rng, duration_s=60.0)
        return synthetic_trace(arr, LognormalLengths(1000.0, 1.0, 200.0, 1.0), rng, "syn")

    a, b, c = make(7), make(7), make(8)
    assert np.array_equal(a.arrival_s, b.arrival_s)
    assert np.array_equal(a.prompt_tokens, b.prompt_tokens)
    assert not np.array_equal(a.prompt_tokens[:10], c.prompt_tokens[:10])


def test_length_samplers() -> None:
    rng = np.random.default_rng(3)
    prompt, output = LognormalLengths(1000.0, 0.5, 100.0, 0.5, max_prompt=4000).sample(20_000, rng)
    assert np.median(prompt) == pytest.approx(1000, rel=0.05)
    assert prompt.max() <= 4000 and output.min() >= 1
    base = Trace(np.arange(3.0), np.array([10, 20, 30]), np.array([1, 2, 3]))
    p, o = EmpiricalLengths.from_trace(base).sample(100, rng)
    assert set(zip(p.tolist(), o.tolist(), strict=True)) <= {(10, 1), (20, 2), (30, 3)}


def test_sessions_extend_their_own_prompts_and_share_system_prompts() -> None:
    spec = SessionSpec(rate_per_s=1.0, duration_s=100.0, mean_turns=5.0, num_system_prompts=2)
    sessions = generate_sessions(spec, np.random.default_rng(5))
    assert sessions and len({s.system for s in sessions}) == 2
    long = max(sessions, key=lambda s: len(s.turns))
    assert len(long.turns) >= 3
    first, second = long.request(0, 0.0), long.request(1, 10.0)
    assert second.segments[: len(first.segments)] == first.segments
    assert second.segments[len(first.segments)].key == first.output_key
    assert (
        second.prompt_tokens
        == first.prompt_tokens + first.output_tokens + long.turns[1].user_tokens
    )
    for s in sessions:
        for k in range(len(s.turns)):
            assert s.request(k, 0.0).prompt_tokens <= spec.max_prompt_tokens
    again = generate_sessions(spec, np.random.default_rng(5))
    assert [s.turns for s in again] == [s.turns for s in sessions]
