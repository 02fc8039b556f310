"""The PromQL queries one decision runs, by default over vLLM's and kube-state-metrics' names.

Each query must answer one number (a one-element vector or a scalar): aggregate with ``sum`` /
``avg``. ``{q}`` in ``promptQuantileQuery`` is replaced by the quantile. The defaults select
the engines' series with ``podSelector`` (PromQL label matchers, default the Deployment's
namespace) and the Deployment's replica counts from kube-state-metrics.

The arrival rate stands in for the router's arrival counter with the engines' completions
(``vllm:request_success_total``): they lag arrivals by a request's latency. A router that
counts arrivals (llm-d's EPP, an ingress) gives the forecast a better signal: set
``arrivalRateQuery``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

QUANTILES = (0.5, 0.9, 0.99)
"""Prompt-length quantiles read for the capacity model's tail (the twin reads eight)."""


@dataclass(frozen=True, slots=True)
class Queries:
    arrival_rate: str
    waiting: str
    running: str
    kv_usage: str
    preemptions: str
    ttft_p90: str
    itl_p99: str
    prompt_tokens: str
    output_tokens: str
    prompt_quantile: str
    ready_replicas: str
    spec_replicas: str

    def replaced(self, meta: Mapping[str, str]) -> Queries:
        """These queries with the metadata's overrides (``<field>Query`` keys)."""
        given = {f: meta[k].strip() for k, f in QUERY_KEYS.items() if meta.get(k, "").strip()}
        return replace(self, **given)

    def quantile(self, q: float) -> str:
        return self.prompt_quantile.replace("{q}", repr(q))


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.replace("p90", "P90").replace("p99", "P99").title() for p in rest)


QUERY_KEYS = {f"{_camel(f.name)}Query": f.name for f in fields(Queries)}
"""Metadata key -> field: ``arrivalRateQuery``, ``waitingQuery``, ``ttftP90Query``, ..."""


def default_queries(selector: str, namespace: str, deployment: str) -> Queries:
    sel = "{" + selector + "}"
    kube = f'{{namespace="{namespace}",deployment="{deployment}"}}'

    def mean(name: str) -> str:
        return f"sum(rate({name}_sum{sel}[5m])) / sum(rate({name}_count{sel}[5m]))"

    def quantile(q: str, name: str, window: str = "1m") -> str:
        return f"histogram_quantile({q}, sum by (le) (rate({name}_bucket{sel}[{window}])))"

    return Queries(
        arrival_rate=f"sum(rate(vllm:request_success_total{sel}[1m]))",
        waiting=f"sum(vllm:num_requests_waiting{sel})",
        running=f"sum(vllm:num_requests_running{sel})",
        kv_usage=f"avg(vllm:kv_cache_usage_perc{sel})",
        preemptions=f"sum(rate(vllm:num_preemptions_total{sel}[1m]))",
        ttft_p90=quantile("0.9", "vllm:time_to_first_token_seconds"),
        itl_p99=quantile("0.99", "vllm:inter_token_latency_seconds"),
        prompt_tokens=mean("vllm:request_prompt_tokens"),
        output_tokens=mean("vllm:request_generation_tokens"),
        prompt_quantile=quantile("{q}", "vllm:request_prompt_tokens", "5m"),
        ready_replicas=f"kube_deployment_status_replicas_ready{kube}",
        spec_replicas=f"kube_deployment_spec_replicas{kube}",
    )
