"""The extender's own Prometheus metrics (its own registry, served at ``/metrics``)."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

# Seconds; kube-scheduler's default httpTimeout is 5 s, the goal is milliseconds.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)


@dataclass(frozen=True, slots=True)
class ExtenderMetrics:
    registry: CollectorRegistry
    requests: Counter
    latency: Histogram
    errors: Counter
    nodes: Gauge
    assumed: Gauge
    loads: Counter


def make_metrics() -> ExtenderMetrics:
    reg = CollectorRegistry()
    return ExtenderMetrics(
        registry=reg,
        requests=Counter(
            "gpuplane_extender_requests",
            "Extender calls answered, by verb and HTTP status code.",
            ["verb", "code"],
            registry=reg,
        ),
        latency=Histogram(
            "gpuplane_extender_request_duration_seconds",
            "Time from the request's arrival to its answer, by verb.",
            ["verb"],
            buckets=LATENCY_BUCKETS,
            registry=reg,
        ),
        errors=Counter(
            "gpuplane_extender_errors",
            "Calls answered with an error, by verb and kind (bad-request, not-ready, "
            "too-large, deadline, internal, bind, bind-check).",
            ["verb", "kind"],
            registry=reg,
        ),
        nodes=Gauge("gpuplane_extender_nodes", "Nodes in the extender's view.", registry=reg),
        assumed=Gauge(
            "gpuplane_extender_assumed_pods",
            "Pods assumed on a node and not yet seen bound.",
            registry=reg,
        ),
        loads=Counter(
            "gpuplane_extender_cluster_loads",
            "Full reads of the cluster (snapshot load or relist), by outcome.",
            ["outcome"],
            registry=reg,
        ),
    )
