"""An engine's ``/metrics`` as vLLM or SGLang would show it: samples for the series store.

``engine_series`` reads one engine into (family, labels, value-or-histogram) entries using the
engine kind's own names; ``to_samples`` flattens them into
:class:`~gpuplane.core.tsdb.MetricSample`\\ s exactly as a scrape shows them (counters with
``_total``, histograms as cumulative ``_bucket{le=...}`` plus ``_sum`` and ``_count``).

``extra_labels`` stand for the target labels Prometheus adds to every series of a scrape (pod,
namespace), which is how several engines of one model are told apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuplane.core.tsdb import MetricSample, labels_of
from gpuplane.serving.metrics.families import (
    VLLM_FINISHED_REASONS,
    Family,
    sglang_families,
    vllm_families,
)
from gpuplane.serving.metrics.histogram import Histogram, go_float

if TYPE_CHECKING:
    from gpuplane.serving.engine.engine import Engine


@dataclass(frozen=True, slots=True)
class Series:
    """One series of one family: its labels and its value (a number or a histogram)."""

    family: Family
    labels: Mapping[str, str]
    value: float | Histogram


def engine_series(engine: Engine, extra_labels: Mapping[str, str] | None = None) -> list[Series]:
    """Every metric of ``engine`` under its kind's names."""
    extra = dict(extra_labels or {})
    if engine.kind == "vllm":
        return _vllm(engine, extra)
    return _sglang(engine, extra)


def _vllm(engine: Engine, extra: dict[str, str]) -> list[Series]:
    cfg, st = engine.config, engine.stats
    base = {"model_name": cfg.model_name, "engine": str(cfg.engine_index), **extra}
    values: dict[str, float | Histogram] = {
        "vllm:num_requests_running": float(engine.num_running()),
        "vllm:num_requests_waiting": float(engine.num_waiting()),
        "vllm:kv_cache_usage_perc": engine.kv_usage(),
        "vllm:prefix_cache_queries": float(st.prefix_queries),
        "vllm:prefix_cache_hits": float(st.prefix_hits),
        "vllm:num_preemptions": float(st.preemptions),
        "vllm:prompt_tokens": float(st.prompt_tokens),
        "vllm:generation_tokens": float(st.generation_tokens),
        "vllm:request_prompt_tokens": st.prompt_len,
        "vllm:request_generation_tokens": st.generation_len,
        "vllm:iteration_tokens_total": st.iteration_tokens,
        "vllm:request_max_num_generation_tokens": st.max_generation,
        "vllm:request_params_n": st.params_n,
        "vllm:request_params_max_tokens": st.max_tokens_param,
        "vllm:time_to_first_token_seconds": st.ttft,
        "vllm:inter_token_latency_seconds": st.itl,
        "vllm:request_time_per_output_token_seconds": st.tpot,
        "vllm:e2e_request_latency_seconds": st.e2e,
        "vllm:request_queue_time_seconds": st.queue,
        "vllm:request_inference_time_seconds": st.inference,
        "vllm:request_prefill_time_seconds": st.prefill,
        "vllm:request_decode_time_seconds": st.decode,
        "vllm:request_prefill_kv_computed_tokens": st.prefill_computed,
        "vllm:request_num_preemptions": st.num_preemptions_hist,
        "vllm:prompt_tokens_cached": float(st.prompt_cached_tokens),
    }
    cached, external = st.prompt_cached_tokens, st.prompt_external_tokens
    labelled: dict[str, dict[str, float]] = {
        # The model has no deferred waiting (structured-output grammars, LoRA slots).
        "vllm:num_requests_waiting_by_reason": {
            "capacity": float(engine.num_waiting()),
            "deferred": 0.0,
        },
        "vllm:engine_sleep_state": {"awake": 1.0, "weights_offloaded": 0.0, "discard_all": 0.0},
        "vllm:prompt_tokens_by_source": {
            "local_compute": float(st.prompt_tokens - cached - external),
            "local_cache_hit": float(cached),
            "external_kv_transfer": float(external),
        },
    }
    out: list[Series] = []
    for fam in vllm_families(cfg.max_model_len):
        if fam.name == "vllm:request_success":
            counts = {str(r): n for r, n in st.success.items()}
            for reason in VLLM_FINISHED_REASONS:
                labels = {**base, "finished_reason": reason}
                out.append(Series(fam, labels, float(counts.get(reason, 0))))
        elif fam.name in labelled:
            label = fam.labels[-1]
            for value_name, value in labelled[fam.name].items():
                out.append(Series(fam, {**base, label: value_name}, value))
        elif fam.name == "vllm:cache_config_info":
            info = {
                "block_size": str(engine.block_size),
                "enable_prefix_caching": str(cfg.enable_prefix_caching),
                "engine": str(cfg.engine_index),
                "num_gpu_blocks": str(cfg.num_gpu_blocks),
                **extra,
            }
            out.append(Series(fam, info, 1.0))
        else:
            out.append(Series(fam, base, values[fam.name]))
    return out


def _sglang(engine: Engine, extra: dict[str, str]) -> list[Series]:
    cfg, st = engine.config, engine.stats
    base = {"model_name": cfg.model_name, **extra}
    used = (engine.kv.num_blocks - engine.kv.num_free) * engine.block_size
    values: dict[str, float | Histogram] = {
        "sglang:num_running_reqs": float(engine.num_running()),
        "sglang:num_used_tokens": float(used),
        "sglang:token_usage": engine.kv_usage(),
        "sglang:gen_throughput": st.gen_throughput(),
        "sglang:num_queue_reqs": float(engine.num_waiting()),
        "sglang:cache_hit_rate": st.last_hit_rate,
        "sglang:num_retracted_reqs": float(st.last_retracted),
        "sglang:queue_time_seconds": st.queue,
        "sglang:prompt_tokens_total": float(st.finished_prompt_tokens),
        "sglang:generation_tokens_total": float(st.finished_generation_tokens),
        "sglang:cached_tokens_total": float(st.cached_tokens),
        "sglang:num_requests_total": float(st.num_requests),
        "sglang:num_aborted_requests_total": float(st.num_aborted),
        "sglang:time_to_first_token_seconds": st.ttft,
        "sglang:inter_token_latency_seconds": st.itl,
        "sglang:e2e_request_latency_seconds": st.e2e,
    }
    return [Series(fam, base, values[fam.name]) for fam in sglang_families()]


def to_samples(series: Iterable[Series]) -> list[MetricSample]:
    """The samples a scrape of these series returns."""
    out: list[MetricSample] = []
    for s in series:
        name = s.family.sample_name
        if isinstance(s.value, Histogram):
            for le, count in s.value.cumulative():
                labels = labels_of({**s.labels, "le": go_float(le)})
                out.append(MetricSample(f"{name}_bucket", labels, float(count)))
            labels = labels_of(s.labels)
            out.append(MetricSample(f"{name}_sum", labels, s.value.sum))
            out.append(MetricSample(f"{name}_count", labels, float(s.value.count)))
        else:
            out.append(MetricSample(name, labels_of(s.labels), s.value))
    return out


def engine_samples(
    engine: Engine, extra_labels: Mapping[str, str] | None = None
) -> list[MetricSample]:
    """One scrape of ``engine``'s metrics endpoint."""
    return to_samples(engine_series(engine, extra_labels))
