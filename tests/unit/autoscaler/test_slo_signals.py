"""The SLO scaler's signals from query answers (``autoscaler.slo.signals``): one reading rule
for the twin and the live scaler, and the query set the KEDA scaler's metadata defaults to."""

from __future__ import annotations

import math

import pytest

from gpuplane.autoscaler.slo.queries import HISTORY_STEPS, QUANTILES, default_queries
from gpuplane.autoscaler.slo.signals import (
    UNKNOWN_MIX,
    Query,
    SignalMemory,
    history_grid,
    plan,
    read_signals,
    signals_from,
)

Q = default_queries('service="chat"', arrival_selector='service="chat"')
NOW, STEP = 900.0, 15.0


def answers(**values: float | None) -> dict[Query, float | None]:
    return {Query(getattr(Q, k), NOW): v for k, v in values.items()}


def test_the_plan_reads_every_signal_now_and_the_history_once() -> None:
    first = plan(Q, NOW, STEP, SignalMemory())
    now = [q for q in first if q.at_s == NOW and q.text != Q.arrival_rate]
    assert len(now) == 9 + len(QUANTILES)
    history = [q.at_s for q in first if q.text == Q.arrival_rate]
    assert history == list(history_grid(NOW, STEP)) and len(history) == HISTORY_STEPS
    _, memory = signals_from(Q, {}, NOW, STEP, SignalMemory())
    later = [q.at_s for q in plan(Q, NOW + STEP, STEP, memory) if q.text == Q.arrival_rate]
    assert later == [NOW + STEP]


def test_no_data_is_zero_for_gauges_and_unknown_for_latencies() -> None:
    signals, memory = signals_from(Q, {}, NOW, STEP, SignalMemory(mix=(900.0, 120.0)))
    assert signals.arrival_rps == (0.0,) * HISTORY_STEPS
    assert (signals.num_requests_waiting, signals.kv_cache_usage) == (0.0, 0.0)
    assert signals.ttft_p90_s is None and signals.queue_time_p90_s is None
    # No request finished in the mix window: the last known mix holds.
    assert (signals.mean_prompt_tokens, signals.mean_output_tokens) == (900.0, 120.0)
    assert memory.mix == (900.0, 120.0) and signals.arrival_scv == 1.0


def test_values_are_cleaned_as_keda_reads_them() -> None:
    results = answers(
        waiting=-1.0,
        kv_usage=1.3,
        ttft_p90=math.nan,
        itl_p99=-0.1,
        queue_time_p90=0.25,
        prompt_tokens=1200.0,
        output_tokens=None,
    )
    signals, memory = signals_from(Q, results, NOW, STEP, SignalMemory())
    assert signals.num_requests_waiting == 0.0 and signals.kv_cache_usage == 1.0
    assert signals.ttft_p90_s is None and signals.itl_p99_s is None
    assert signals.queue_time_p90_s == 0.25
    assert memory.mix == UNKNOWN_MIX  # half a mix is no mix


@pytest.mark.parametrize(
    ("tokens", "kept"),
    [
        ((500.0, 900.0, 1500.0, 2500.0, 3500.0, 4800.0), True),
        ((500.0, 900.0, 800.0, 2500.0, 3500.0, 4800.0), False),  # decreasing: not a quantile set
        ((500.0, 900.0, None, 2500.0, 3500.0, 4800.0), False),  # one missing: none
    ],
)
def test_prompt_quantiles_only_when_all_answer_in_order(
    tokens: tuple[float | None, ...], kept: bool
) -> None:
    results = {Query(Q.quantile(p), NOW): t for p, t in zip(QUANTILES, tokens, strict=True)}
    signals, _ = signals_from(Q, results, NOW, STEP, SignalMemory())
    assert signals.prompt_quantiles == (tuple(zip(QUANTILES, tokens, strict=True)) if kept else ())


class Answers:
    """A ``QueryEvaluator`` over a dict; records what it was asked."""

    def __init__(self, values: dict[tuple[str, float], float]) -> None:
        self.values = values
        self.asked: list[tuple[str, float]] = []

    def query(self, query: str, at_s: float) -> float | None:
        self.asked.append((query, at_s))
        return self.values.get((query, at_s))


def test_the_history_is_read_once_and_remembered() -> None:
    grid = history_grid(NOW, STEP)
    source = Answers({(Q.arrival_rate, t): t / 100 for t in grid})
    signals, memory = read_signals(source, Q, NOW, STEP, SignalMemory())
    assert signals.arrival_rps == tuple(t / 100 for t in grid)
    # Later answers about the past (late scrapes) do not rewrite the remembered history.
    source.values = {(Q.arrival_rate, t): 0.0 for t in (*grid, NOW + STEP)}
    later, _ = read_signals(source, Q, NOW + STEP, STEP, memory)
    assert later.arrival_rps == (*signals.arrival_rps[1:], 0.0)


def test_the_arrival_rate_is_the_routers_counter_or_the_completions() -> None:
    assert 'vllm:num_incoming_requests_total{service="chat"}[1m]' in Q.arrival_rate
    plain = default_queries('namespace="llm"')
    assert 'vllm:request_success_total{namespace="llm"}[1m]' in plain.arrival_rate
    assert "vllm:request_queue_time_seconds_bucket" in plain.queue_time_p90
