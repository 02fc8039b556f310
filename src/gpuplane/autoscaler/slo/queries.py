"""The one set of PromQL queries the SLO scaler's signals come from, in the twin and live.

Both providers run these strings: the twin with gpuplane's PromQL over its series store, the
KEDA external scaler against a real Prometheus (``signals.py`` turns the answers into
``PoolSignals``). Each query must answer one number (a one-element vector or a scalar):
aggregate with ``sum`` / ``avg``. ``{q}`` in ``prompt_quantile`` is replaced by the quantile.

The defaults are vLLM V1's names, selected by ``selector`` (PromQL label matchers: the twin's
``service="..."``, live the Deployment's namespace or ``podSelector``). Windows follow the
usual four-scrapes rule at a 15 s scrape interval (``[1m]``); the request mix is read over
five minutes, as long as the twin's oracle reads it.

The arrival rate is a router's arrival counter when ``arrival_selector`` is given (the twin's
router and ``serve router`` export production-stack's ``vllm:num_incoming_requests_total``,
which counts while no engine runs), else the engines' completions
(``vllm:request_success_total``), which lag arrivals by a request's latency.
"""

from __future__ import annotations

from dataclasses import dataclass

QUANTILES = (0.25, 0.5, 0.75, 0.9, 0.95, 0.99)
"""Prompt-length quantiles read for the capacity model's tail (``histogram_quantile`` of
``vllm:request_prompt_tokens``: exact only at the bucket bounds, linear between them)."""

HISTORY_STEPS = 40
"""The arrival-rate history the forecast sees: ten minutes at the 15 s sync period."""

RATE_WINDOW = "1m"
MIX_WINDOW = "5m"


@dataclass(frozen=True, slots=True)
class SignalQueries:
    arrival_rate: str
    waiting: str
    running: str
    kv_usage: str
    preemptions: str
    ttft_p90: str
    itl_p99: str
    queue_time_p90: str
    prompt_tokens: str
    output_tokens: str
    prompt_quantile: str

    def quantile(self, q: float) -> str:
        return self.prompt_quantile.replace("{q}", repr(q))


def default_queries(selector: str, arrival_selector: str | None = None) -> SignalQueries:
    """The queries over the engines matched by ``selector`` (and the router's arrival counter
    matched by ``arrival_selector``, when there is one)."""
    sel = "{" + selector + "}"

    def mean(name: str) -> str:
        return (
            f"sum(rate({name}_sum{sel}[{MIX_WINDOW}])) / sum(rate({name}_count{sel}[{MIX_WINDOW}]))"
        )

    def quantile(q: str, name: str, window: str = RATE_WINDOW) -> str:
        return f"histogram_quantile({q}, sum by (le) (rate({name}_bucket{sel}[{window}])))"

    if arrival_selector is None:
        arrivals = f"sum(rate(vllm:request_success_total{sel}[{RATE_WINDOW}]))"
    else:
        arrivals = (
            f"sum(rate(vllm:num_incoming_requests_total{{{arrival_selector}}}[{RATE_WINDOW}]))"
        )
    return SignalQueries(
        arrival_rate=arrivals,
        waiting=f"sum(vllm:num_requests_waiting{sel})",
        running=f"sum(vllm:num_requests_running{sel})",
        kv_usage=f"avg(vllm:kv_cache_usage_perc{sel})",
        preemptions=f"sum(rate(vllm:num_preemptions_total{sel}[{RATE_WINDOW}]))",
        ttft_p90=quantile("0.9", "vllm:time_to_first_token_seconds"),
        itl_p99=quantile("0.99", "vllm:inter_token_latency_seconds"),
        queue_time_p90=quantile("0.9", "vllm:request_queue_time_seconds"),
        prompt_tokens=mean("vllm:request_prompt_tokens"),
        output_tokens=mean("vllm:request_generation_tokens"),
        prompt_quantile=quantile("{q}", "vllm:request_prompt_tokens", MIX_WINDOW),
    )
