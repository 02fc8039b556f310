"""Query answers -> the ``PoolSignals`` one SLO-scaler decision reads, the same in the twin and
live.

A decision runs the queries of ``plan`` (``queries.SignalQueries``: every gauge and latency at
the decision's time, each prompt quantile, and the arrival rate at each history grid time not
read before), a provider answers them (``QueryEvaluator``: the twin with gpuplane's PromQL over
its series store, the KEDA external scaler with Prometheus's HTTP API), and ``signals_from``
turns the answers and the remembered ``SignalMemory`` into signals. What is not in a query
(the arrival variability, the true arrivals and exact prompt quantiles) is not here: only the
twin knows it, and it adds it only when told ``signals: oracle``.

Reading rules (one for both): a query without data (None: empty vector, NaN) is 0 for a gauge
or rate and unknown for a latency; negatives are dropped; the KV usage is clamped to [0, 1]; the
token means keep the last known mix while no request finished in their window; the prompt
quantiles are used only when every one answered and they do not decrease. The arrival rate at a
grid time is read once, at the first decision at or after it, and remembered: a Prometheus
answer about the past may change while late scrapes land, the remembered history does not.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from gpuplane.autoscaler.slo.queries import HISTORY_STEPS, QUANTILES, SignalQueries
from gpuplane.autoscaler.slo.snapshot import PoolSignals


class QueryEvaluator(Protocol):
    """Answers one instant query at ``at_s`` with one number (None: no data)."""

    def query(self, query: str, at_s: float) -> float | None: ...


@dataclass(frozen=True, slots=True)
class Query:
    """One instant query of a decision."""

    text: str
    at_s: float


UNKNOWN_MIX = (1024.0, 256.0)
"""The (prompt, output) token means assumed until a request has finished: a chat-like guess
(what the twin assumed without requests). Zero tokens would make a prompt cost no time, and
the first arrivals, queued behind the first prefills, would look free."""


@dataclass(frozen=True, slots=True)
class SignalMemory:
    """What the signals keep between decisions: the arrival rates read per grid time (oldest
    first, at most the history's length) and the last known (prompt, output) token means."""

    rates: tuple[tuple[float, float], ...] = ()
    mix: tuple[float, float] = UNKNOWN_MIX


def history_grid(now_s: float, step_s: float) -> tuple[float, ...]:
    """The history's times, oldest first: multiples of ``step_s`` up to ``now_s``."""
    last = math.floor(now_s / step_s) * step_s
    return tuple(last - k * step_s for k in reversed(range(HISTORY_STEPS)))


def _now_queries(queries: SignalQueries) -> tuple[str, ...]:
    q = queries
    return (
        q.waiting,
        q.running,
        q.kv_usage,
        q.preemptions,
        q.ttft_p90,
        q.itl_p99,
        q.queue_time_p90,
        q.prompt_tokens,
        q.output_tokens,
        *(q.quantile(p) for p in QUANTILES),
    )


def plan(
    queries: SignalQueries, now_s: float, step_s: float, memory: SignalMemory
) -> tuple[Query, ...]:
    """The queries one decision at ``now_s`` runs."""
    known = {t for t, _ in memory.rates}
    history = [
        Query(queries.arrival_rate, t) for t in history_grid(now_s, step_s) if t not in known
    ]
    return (*(Query(text, now_s) for text in _now_queries(queries)), *history)


def _gauge(value: float | None) -> float:
    return max(0.0, value) if value is not None and math.isfinite(value) else 0.0


def _latency(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) and value >= 0 else None


def _quantiles(values: tuple[float | None, ...]) -> tuple[tuple[float, float], ...]:
    clean = tuple(_latency(v) for v in values)
    if any(v is None for v in clean):
        return ()
    points = tuple((q, float(v)) for q, v in zip(QUANTILES, clean, strict=True) if v is not None)
    tokens = [t for _, t in points]
    return points if tokens == sorted(tokens) else ()


def signals_from(
    queries: SignalQueries,
    results: Mapping[Query, float | None],
    now_s: float,
    step_s: float,
    memory: SignalMemory,
) -> tuple[PoolSignals, SignalMemory]:
    """The signals of the decision at ``now_s`` from the answers to ``plan``'s queries (a
    missing answer reads as no data), and the memory for the next decision."""

    def at_now(text: str) -> float | None:
        return results.get(Query(text, now_s))

    q = queries
    times = history_grid(now_s, step_s)
    rates = dict(memory.rates)
    for t in times:
        if t not in rates:
            rates[t] = _gauge(results.get(Query(q.arrival_rate, t)))
    prompt, output = _latency(at_now(q.prompt_tokens)), _latency(at_now(q.output_tokens))
    mix = (prompt, output) if prompt is not None and output is not None else memory.mix
    signals = PoolSignals(
        arrival_rps=tuple(rates[t] for t in times),
        mean_prompt_tokens=mix[0],
        mean_output_tokens=mix[1],
        step_s=step_s,
        num_requests_waiting=_gauge(at_now(q.waiting)),
        num_requests_running=_gauge(at_now(q.running)),
        kv_cache_usage=min(_gauge(at_now(q.kv_usage)), 1.0),
        preemptions_per_s=_gauge(at_now(q.preemptions)),
        ttft_p90_s=_latency(at_now(q.ttft_p90)),
        itl_p99_s=_latency(at_now(q.itl_p99)),
        queue_time_p90_s=_latency(at_now(q.queue_time_p90)),
        prompt_quantiles=_quantiles(tuple(at_now(q.quantile(p)) for p in QUANTILES)),
    )
    kept = tuple((t, rates[t]) for t in times)
    return signals, SignalMemory(kept, mix)


def read_signals(
    evaluator: QueryEvaluator,
    queries: SignalQueries,
    now_s: float,
    step_s: float,
    memory: SignalMemory,
) -> tuple[PoolSignals, SignalMemory]:
    """``plan`` answered one query at a time by ``evaluator``, then ``signals_from``."""
    results = {
        query: evaluator.query(query.text, query.at_s)
        for query in plan(queries, now_s, step_s, memory)
    }
    return signals_from(queries, results, now_s, step_s, memory)
