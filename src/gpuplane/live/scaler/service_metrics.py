"""The scaler's own Prometheus metrics and its small ``/metrics`` + ``/healthz`` HTTP endpoint."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST


class ScalerMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.calls = Counter(
            "gpuplane_scaler_grpc_calls",
            "gRPC calls by method and status code",
            ["method", "code"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "gpuplane_scaler_grpc_latency_seconds",
            "gRPC call latency (streams: per message sent)",
            ["method"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
            registry=self.registry,
        )
        self.errors = Counter(
            "gpuplane_scaler_errors",
            "Failed decisions by kind (metadata, prometheus, internal)",
            ["kind"],
            registry=self.registry,
        )
        self.desired = Gauge(
            "gpuplane_scaler_desired_replicas",
            "The last decision's replica count per ScaledObject",
            ["namespace", "scaledobject"],
            registry=self.registry,
        )

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


CONTENT_TYPE = CONTENT_TYPE_LATEST
