"""The router's own metric families (docs/live.md, "Router"): what it received, where it sent
it, how each engine answered, and which engines are ready."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from gpuplane.serving.metrics.families import VLLM_TTFT_BUCKETS


class RouterMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.incoming = Counter(
            "vllm:num_incoming_requests",
            "Number of incoming requests.",
            ("model",),
            registry=registry,
        )
        self.routed = Counter(
            "gpuplane_router_routed_requests",
            "Requests sent to each engine.",
            ("server",),
            registry=registry,
        )
        self.no_engine = Counter(
            "gpuplane_router_no_engine", "Requests refused: no ready engine.", registry=registry
        )
        self.too_long = Counter(
            "gpuplane_router_prompt_too_long",
            "Requests refused (400): the prompt and max_tokens exceed every ready engine's "
            "max_model_len.",
            registry=registry,
        )
        self.ttfb = Histogram(
            "gpuplane_router_time_to_first_byte_seconds",
            "Time from the request to the engine's first response bytes.",
            ("server",),
            buckets=VLLM_TTFT_BUCKETS,
            registry=registry,
        )
        self.duration = Histogram(
            "gpuplane_router_request_duration_seconds",
            "Time from the request to the engine's last response bytes.",
            ("server",),
            buckets=VLLM_TTFT_BUCKETS,
            registry=registry,
        )
        self.ready = Gauge(
            "gpuplane_router_engine_ready",
            "1 while the engine's /health answers 200.",
            ("server",),
            registry=registry,
        )
        self.disaggregated = Counter(
            "gpuplane_router_disaggregated_requests",
            "Requests split into a prefill on one engine and a decode on another.",
            registry=registry,
        )
        self.prefill = Histogram(
            "gpuplane_router_prefill_duration_seconds",
            "Time from a split request to its prefill engine's answer (kv_transfer_params).",
            ("server",),
            buckets=VLLM_TTFT_BUCKETS,
            registry=registry,
        )
        self.retries = Counter(
            "gpuplane_router_retries",
            "Requests sent to another engine after this one failed before answering.",
            ("server",),
            registry=registry,
        )
        self.prefill_failures = Counter(
            "gpuplane_router_prefill_failures",
            "Split requests whose prefill engine failed or answered an error.",
            ("server",),
            registry=registry,
        )
