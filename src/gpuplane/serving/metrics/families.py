"""The Prometheus metric families that vLLM V1 and SGLang servers export, as data.

vLLM: ``vllm/v1/metrics/loggers.py`` (``PrometheusStatLogger``). Every family has the labels
``model_name`` and ``engine`` (the data-parallel engine index); ``vllm:request_success`` adds
``finished_reason``. Counters are declared without ``_total`` and exposed with it. The names are
the current ones: ``vllm:kv_cache_usage_perc`` (replaced ``gpu_cache_usage_perc``),
``vllm:prefix_cache_queries``/``hits`` (replaced ``gpu_prefix_cache_*``) and
``vllm:inter_token_latency_seconds`` (replaced ``time_per_output_token_seconds``, deprecated in
0.11 and removed in 2026); ``vllm:request_time_per_output_token_seconds`` is the per-request TPOT.

SGLang: ``python/sglang/srt/metrics/collector.py`` (``SchedulerMetricsCollector`` gauges and the
queue-time histogram; ``TokenizerMetricsCollector`` counters and latency histograms) with the
label ``model_name``. SGLang declares its counters with ``_total`` in the name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["gauge", "counter", "histogram"]


@dataclass(frozen=True, slots=True)
class Family:
    """One metric family: the name as declared (counters: without ``_total`` for vLLM)."""

    name: str
    kind: Kind
    help: str
    labels: tuple[str, ...]
    buckets: tuple[float, ...] = ()

    @property
    def sample_name(self) -> str:
        """The series name a scrape shows (counters end in ``_total``)."""
        if self.kind == "counter" and not self.name.endswith("_total"):
            return self.name + "_total"
        return self.name


def build_1_2_5_buckets(max_value: int) -> tuple[float, ...]:
    """vLLM's token-count buckets: 1, 2, 5, 10, 20, 50, ... up to ``max_value``."""
    out: list[float] = []
    exponent = 0
    while True:
        for mantissa in (1, 2, 5):
            value = mantissa * 10**exponent
            if value > max_value:
                return tuple(out)
            out.append(float(value))
        exponent += 1


VLLM_LABELS = ("model_name", "engine")
VLLM_TTFT_BUCKETS = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
    10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
)  # fmt: skip
VLLM_ITL_BUCKETS = (
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
    10.0, 20.0, 40.0, 80.0,
)  # fmt: skip
VLLM_REQUEST_LATENCY_BUCKETS = (
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
    120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0,
)  # fmt: skip
VLLM_ITERATION_TOKENS_BUCKETS = (
    1.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0,
)  # fmt: skip
VLLM_PARAMS_N_BUCKETS = (1.0, 2.0, 5.0, 10.0, 20.0)
VLLM_NUM_PREEMPTIONS_BUCKETS = (1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 20.0)
# vllm/v1/engine FinishReason as exported: all five series are created up front.
VLLM_FINISHED_REASONS = ("stop", "length", "abort", "error", "repetition")
VLLM_WAITING_REASONS = ("capacity", "deferred")
VLLM_SLEEP_STATES = ("awake", "weights_offloaded", "discard_all")
VLLM_PROMPT_SOURCES = ("local_compute", "local_cache_hit", "external_kv_transfer")


_VLLM_SCALARS: tuple[tuple[str, Kind, str], ...] = (
    ("vllm:num_requests_running", "gauge", "Number of requests in model execution batches."),
    ("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed."),
    ("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage."),
    (
        "vllm:prefix_cache_queries",
        "counter",
        "Prefix cache queries, in terms of number of queried tokens.",
    ),
    (
        "vllm:prefix_cache_hits",
        "counter",
        "Prefix cache hits, in terms of number of cached tokens.",
    ),
    ("vllm:num_preemptions", "counter", "Cumulative number of preemption from the engine."),
    ("vllm:prompt_tokens", "counter", "Number of prefill tokens processed."),
    ("vllm:generation_tokens", "counter", "Number of generation tokens processed."),
    (
        "vllm:prompt_tokens_cached",
        "counter",
        "Number of cached prompt tokens (local + external).",
    ),
)

# Families with one extra label whose values are all created up front: name, kind, help, label.
_VLLM_LABELLED: tuple[tuple[str, Kind, str, str], ...] = (
    (
        "vllm:num_requests_waiting_by_reason",
        "gauge",
        "Number of requests waiting, by reason (capacity or deferred).",
        "reason",
    ),
    (
        "vllm:engine_sleep_state",
        "gauge",
        "Engine sleep state; awake = 0 means engine is sleeping.",
        "sleep_state",
    ),
    (
        "vllm:prompt_tokens_by_source",
        "counter",
        "Number of prompt tokens by source.",
        "source",
    ),
)

# name, help, bucket set ("tok": 1-2-5 up to max_model_len)
_VLLM_HISTOGRAMS = (
    ("vllm:request_prompt_tokens", "Number of prefill tokens processed.", "tok"),
    ("vllm:request_generation_tokens", "Number of generation tokens processed.", "tok"),
    ("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", "iter"),
    (
        "vllm:request_max_num_generation_tokens",
        "Histogram of maximum number of requested generation tokens.",
        "tok",
    ),
    ("vllm:request_params_n", "Histogram of the n request parameter.", "n"),
    ("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", "tok"),
    ("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", "ttft"),
    ("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", "itl"),
    (
        "vllm:request_time_per_output_token_seconds",
        "Histogram of time_per_output_token_seconds per request.",
        "itl",
    ),
    ("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", "lat"),
    (
        "vllm:request_queue_time_seconds",
        "Histogram of time spent in WAITING phase for request.",
        "lat",
    ),
    (
        "vllm:request_inference_time_seconds",
        "Histogram of time spent in RUNNING phase for request.",
        "lat",
    ),
    (
        "vllm:request_prefill_time_seconds",
        "Histogram of time spent in PREFILL phase for request.",
        "lat",
    ),
    (
        "vllm:request_decode_time_seconds",
        "Histogram of time spent in DECODE phase for request.",
        "lat",
    ),
    (
        "vllm:request_prefill_kv_computed_tokens",
        "Histogram of new KV tokens computed during prefill (excluding cached tokens).",
        "tok",
    ),
    (
        "vllm:request_num_preemptions",
        "Number of preemptions per request.",
        "preempt",
    ),
)

VLLM_CACHE_CONFIG_LABELS = ("block_size", "enable_prefix_caching", "engine", "num_gpu_blocks")


def vllm_families(max_model_len: int) -> tuple[Family, ...]:
    """vLLM V1's families (token-count histograms are bucketed up to ``max_model_len``)."""
    buckets = {
        "tok": build_1_2_5_buckets(max_model_len),
        "iter": VLLM_ITERATION_TOKENS_BUCKETS,
        "n": VLLM_PARAMS_N_BUCKETS,
        "ttft": VLLM_TTFT_BUCKETS,
        "itl": VLLM_ITL_BUCKETS,
        "lat": VLLM_REQUEST_LATENCY_BUCKETS,
        "preempt": VLLM_NUM_PREEMPTIONS_BUCKETS,
    }
    out = [Family(name, kind, text, VLLM_LABELS) for name, kind, text in _VLLM_SCALARS]
    out += [
        Family(name, kind, text, (*VLLM_LABELS, label))
        for name, kind, text, label in _VLLM_LABELLED
    ]
    out.append(
        Family(
            "vllm:request_success",
            "counter",
            "Count of successfully processed requests.",
            (*VLLM_LABELS, "finished_reason"),
        )
    )
    out += [
        Family(name, "histogram", text, VLLM_LABELS, buckets[key])
        for name, text, key in _VLLM_HISTOGRAMS
    ]
    out.append(
        Family(
            "vllm:cache_config_info",
            "gauge",
            "Information of the LLMEngine CacheConfig",
            VLLM_CACHE_CONFIG_LABELS,
        )
    )
    return tuple(out)


SGLANG_LABELS = ("model_name",)
SGLANG_TTFT_BUCKETS = (
    0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
    200.0, 400.0,
)  # fmt: skip
SGLANG_E2E_BUCKETS = (
    0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
    200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0,
)  # fmt: skip
SGLANG_ITL_BUCKETS = (
    0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060,
    0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000,
)  # fmt: skip
SGLANG_QUEUE_BUCKETS = (
    0.0, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
    70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0, 900.0, 1000.0,
    1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0, 3000.0,
)  # fmt: skip


_SGLANG_SCALARS: tuple[tuple[str, Kind, str], ...] = (
    ("sglang:num_running_reqs", "gauge", "The number of running requests."),
    ("sglang:num_used_tokens", "gauge", "The number of used tokens."),
    ("sglang:token_usage", "gauge", "The token usage."),
    ("sglang:gen_throughput", "gauge", "The generation throughput (token/s)."),
    ("sglang:num_queue_reqs", "gauge", "The number of requests in the waiting queue."),
    ("sglang:cache_hit_rate", "gauge", "The prefix cache hit rate."),
    ("sglang:num_retracted_reqs", "gauge", "The number of retracted requests."),
    ("sglang:prompt_tokens_total", "counter", "Number of prefill tokens processed."),
    ("sglang:generation_tokens_total", "counter", "Number of generation tokens processed."),
    ("sglang:cached_tokens_total", "counter", "Number of cached prompt tokens."),
    ("sglang:num_requests_total", "counter", "Number of requests processed."),
    ("sglang:num_aborted_requests_total", "counter", "Number of requests aborted."),
)

_SGLANG_HISTOGRAMS = (
    ("sglang:queue_time_seconds", "Histogram of queueing time in seconds.", SGLANG_QUEUE_BUCKETS),
    (
        "sglang:time_to_first_token_seconds",
        "Histogram of time to first token in seconds.",
        SGLANG_TTFT_BUCKETS,
    ),
    (
        "sglang:inter_token_latency_seconds",
        "Histogram of inter-token latency in seconds.",
        SGLANG_ITL_BUCKETS,
    ),
    (
        "sglang:e2e_request_latency_seconds",
        "Histogram of End-to-end request latency in seconds",
        SGLANG_E2E_BUCKETS,
    ),
)


def sglang_families() -> tuple[Family, ...]:
    out = [Family(name, kind, text, SGLANG_LABELS) for name, kind, text in _SGLANG_SCALARS]
    out += [
        Family(name, "histogram", text, SGLANG_LABELS, b) for name, text, b in _SGLANG_HISTOGRAMS
    ]
    return tuple(out)
