"""NixlConnector's Prometheus families, as vLLM registers them when ``--kv-transfer-config``
names it (``NixlPromMetrics`` in ``nixl_connector.py``; labels ``model_name`` and ``engine``):

- ``vllm:nixl_xfer_time_seconds`` (histogram, 0.005 .. 5 s), ``vllm:nixl_post_time_seconds``
  (histogram, 0.001 .. 5 s), ``vllm:nixl_bytes_transferred`` (histogram, 2 KiB .. 8 GiB in
  powers of 4), ``vllm:nixl_num_descriptors`` (histogram, 10 .. 50000): one observation per
  transfer a decode worker (one per TP rank) completes;
- ``vllm:nixl_num_failed_transfers``, ``vllm:nixl_num_failed_notifications`` (counters, decode
  side) and ``vllm:nixl_num_kv_expired_reqs`` (counter, prefill side: blocks freed after
  ``VLLM_NIXL_ABORT_REQUEST_TIMEOUT`` without a read).

Plus the emulator's own ``gpuplane_emulator_kv_pulls_total{outcome}``: what became of each
request that arrived with ``do_remote_prefill`` (``transferred``, ``local_cache_hit``,
``nothing_to_read``, ``invalid_params``, ``recomputed`` after a failed read under
``kv_load_failure_policy=recompute``, ``failed`` under ``fail``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

XFER_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 5.0)
POST_BUCKETS = (0.001, *XFER_BUCKETS)
BYTES_BUCKETS = tuple(float(2 ** (10 + i)) for i in range(1, 25, 2))
DESCRIPTOR_BUCKETS = (
    10.0, 20.0, 30.0, 50.0, 75.0, 100.0, 200.0, 400.0, 1000.0, 2000.0, 4000.0, 10000.0,
    20000.0, 50000.0,
)  # fmt: skip
PULL_OUTCOMES = (
    "transferred",
    "local_cache_hit",
    "nothing_to_read",
    "invalid_params",
    "recomputed",
    "failed",
)
LABELS = ("model_name", "engine")
FETCH_STAGES = ("waiting_to_start", "in_progress", "completed_waiting")


class NixlMetrics:
    """The families, pre-created for one engine (``engine="0"``, as vLLM's first engine)."""

    def __init__(self, registry: CollectorRegistry, model_name: str) -> None:
        values = (model_name, "0")

        def hist(name: str, doc: str, buckets: tuple[float, ...]) -> Histogram:
            h = Histogram(name, doc, LABELS, buckets=buckets, registry=registry)
            return h.labels(*values)

        def counter(name: str, doc: str) -> Counter:
            return Counter(name, doc, LABELS, registry=registry).labels(*values)

        self.xfer_time = hist(
            "vllm:nixl_xfer_time_seconds",
            "Histogram of transfer duration for NIXL KV Cache transfers.",
            XFER_BUCKETS,
        )
        self.post_time = hist(
            "vllm:nixl_post_time_seconds",
            "Histogram of transfer post time for NIXL KV Cache transfers.",
            POST_BUCKETS,
        )
        self.bytes = hist(
            "vllm:nixl_bytes_transferred",
            "Histogram of bytes transferred per NIXL KV Cache transfers.",
            BYTES_BUCKETS,
        )
        self.descriptors = hist(
            "vllm:nixl_num_descriptors",
            "Histogram of number of descriptors per NIXL  KV Cache transfers.",
            DESCRIPTOR_BUCKETS,
        )
        self.failed_transfers = counter(
            "vllm:nixl_num_failed_transfers", "Number of failed NIXL KV Cache transfers."
        )
        self.failed_notifications = counter(
            "vllm:nixl_num_failed_notifications", "Number of failed NIXL KV Cache notifications."
        )
        self.expired = counter(
            "vllm:nixl_num_kv_expired_reqs",
            "Number of requests that had their KV expire. "
            "NOTE: This metric is tracked on the P instance.",
        )
        pulls = Counter(
            "gpuplane_emulator_kv_pulls",
            "Requests that arrived with do_remote_prefill, by what became of their KV.",
            ("outcome",),
            registry=registry,
        )
        self.pulls = {o: pulls.labels(o) for o in PULL_OUTCOMES}
        self._registry, self._values = registry, values

    def track_fetch_stages(self, stages: Callable[[], dict[str, int]]) -> None:
        """``vllm:num_requests_kv_fetch_by_stage`` (a KV consumer's), read from ``stages`` at
        every scrape."""
        gauge = Gauge(
            "vllm:num_requests_kv_fetch_by_stage",
            "Number of requests fetching KV from a remote engine, by stage.",
            (*LABELS, "stage"),
            registry=self._registry,
        )
        for stage in FETCH_STAGES:
            gauge.labels(*self._values, stage).set_function(partial(_count, stages, stage))


def _count(stages: Callable[[], dict[str, int]], stage: str) -> float:
    return float(stages()[stage])
