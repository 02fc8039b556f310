"""What the HPA reads from the three metrics APIs in one sync, and the errors those APIs give.

The real controller queries ``metrics.k8s.io`` (resource metrics from metrics-server),
``custom.metrics.k8s.io`` (Pods and Object metrics) and ``external.metrics.k8s.io`` (External
metrics, which is where KEDA answers). Here the caller hands over what those APIs would return;
an absent or empty answer produces the same error text the controller's REST client produces
(``pkg/controller/podautoscaler/metrics/client.go``), and an outage can be injected per API.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from gpuplane.autoscaler.hpa.pods import PodMetric


class MetricsApi(StrEnum):
    RESOURCE = "resource"
    CUSTOM = "custom"
    EXTERNAL = "external"


class MetricsFetchError(Exception):
    """The metrics API returned an error or nothing."""


@dataclass(frozen=True, slots=True)
class ObjectMetricValue:
    value_milli: int
    timestamp_s: float = 0.0


@dataclass(frozen=True, slots=True)
class MetricsSnapshot:
    """Everything the metrics APIs would answer at one sync.

    - ``resource``: resource name -> pod name -> the pod's summed usage (metrics-server);
    - ``container_resource``: (resource, container) -> pod name -> that container's usage;
    - ``pods``: custom metric name -> pod name -> value (custom metrics API, Pods);
    - ``objects``: (kind, object name, metric name) -> value (custom metrics API, Object);
    - ``external``: metric name -> every value the external metrics API lists for it;
    - ``external_errors``: metric name -> the error the external metrics API (KEDA's metrics
      server) answers for that metric;
    - ``outages``: API -> error message, to simulate an API that fails.
    """

    resource: dict[str, dict[str, PodMetric]] = field(default_factory=dict)
    container_resource: dict[tuple[str, str], dict[str, PodMetric]] = field(default_factory=dict)
    pods: dict[str, dict[str, PodMetric]] = field(default_factory=dict)
    objects: dict[tuple[str, str, str], ObjectMetricValue] = field(default_factory=dict)
    external: dict[str, tuple[int, ...]] = field(default_factory=dict)
    external_errors: dict[str, str] = field(default_factory=dict)
    outages: dict[MetricsApi, str] = field(default_factory=dict)

    def _check(self, api: MetricsApi, what: str) -> None:
        message = self.outages.get(api)
        if message is not None:
            raise MetricsFetchError(f"unable to fetch metrics from {what}: {message}")

    def resource_metric(self, resource: str, container: str = "") -> dict[str, PodMetric]:
        """``GetResourceMetric``: a copy the caller may modify."""
        self._check(MetricsApi.RESOURCE, "resource metrics API")
        found = (
            self.container_resource.get((resource, container))
            if container
            else self.resource.get(resource)
        )
        if not found:
            raise MetricsFetchError("no metrics returned from resource metrics API")
        return dict(found)

    def raw_metric(self, metric_name: str) -> dict[str, PodMetric]:
        """``GetRawMetric`` (Pods metrics of the custom metrics API)."""
        self._check(MetricsApi.CUSTOM, "custom metrics API")
        found = self.pods.get(metric_name)
        if not found:
            raise MetricsFetchError("no metrics returned from custom metrics API")
        return dict(found)

    def object_metric(self, kind: str, name: str, metric_name: str) -> ObjectMetricValue:
        """``GetObjectMetric``."""
        self._check(MetricsApi.CUSTOM, "custom metrics API")
        found = self.objects.get((kind, name, metric_name))
        if found is None:
            raise MetricsFetchError(
                "unable to fetch metrics from custom metrics API: the server could not find the "
                f"metric {metric_name} for {kind} {name}"
            )
        return found

    def external_metric(self, metric_name: str) -> tuple[int, ...]:
        """``GetExternalMetric``."""
        self._check(MetricsApi.EXTERNAL, "external metrics API")
        error = self.external_errors.get(metric_name)
        if error is not None:
            raise MetricsFetchError(f"unable to fetch metrics from external metrics API: {error}")
        found = self.external.get(metric_name)
        if not found:
            raise MetricsFetchError("no metrics returned from external metrics API")
        return found
