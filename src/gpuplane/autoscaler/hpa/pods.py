"""The pods an HPA's selector matches, and how the controller sorts them before computing.

Modelled on ``replica_calculator.go`` (``groupPods``, ``calculateRequests``):

- a pod that is being deleted or has failed is *ignored*: its sample is dropped and it is never
  filled in;
- a Pending pod is *unready*;
- a pod without a sample is *missing*;
- for the ``cpu`` resource only, a running pod with a sample is also unready when it has no Ready
  condition or start time, or, while it is inside the CPU initialization period, when it is not
  ready or its sample's window started before the last readiness transition (the sample may still
  contain start-up CPU), or, after that period, when it is not ready and never became ready
  (its readiness last changed within the initial readiness delay of its start);
- everything else is ready.

Times are seconds on the caller's clock (the twin's simulated time).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from gpuplane.api.pod_phase import PodPhase
from gpuplane.api.resources import CPU


class ConditionStatus(StrEnum):
    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


Requests = tuple[tuple[str, int], ...]
"""Resource name -> request in milli-units (``cpu: 500m`` is ``("cpu", 500)``)."""


@dataclass(frozen=True, slots=True)
class ContainerInfo:
    """A container's requests; ``restartable`` marks a sidecar init container (restartPolicy
    Always), the only kind of init container whose requests count."""

    name: str
    requests_milli: Requests = ()
    restartable: bool = False

    def request(self, resource: str) -> int | None:
        return dict(self.requests_milli).get(resource)


@dataclass(frozen=True, slots=True)
class PodInfo:
    """What the HPA reads from one pod of its target.

    ``ready`` is the status of the PodReady condition (``None``: the pod has no such condition)
    and ``ready_transition_s`` its lastTransitionTime; ``start_s`` is ``status.startTime``.
    """

    name: str
    phase: PodPhase = PodPhase.RUNNING
    ready: ConditionStatus | None = ConditionStatus.TRUE
    ready_transition_s: float = 0.0
    start_s: float | None = 0.0
    deleted: bool = False
    containers: tuple[ContainerInfo, ...] = ()
    init_containers: tuple[ContainerInfo, ...] = ()
    pod_requests_milli: Requests = ()

    def is_ready(self) -> bool:
        """``podutil.IsPodReady`` combined with the phase check the controller uses."""
        return self.phase is PodPhase.RUNNING and self.ready is ConditionStatus.TRUE


@dataclass(frozen=True, slots=True)
class PodMetric:
    """One pod's sample: value in milli-units, the sample's time and the window it averages."""

    value_milli: int
    timestamp_s: float = 0.0
    window_s: float = 60.0


@dataclass(frozen=True, slots=True)
class PodGroups:
    num_ready: int
    unready: frozenset[str]
    missing: frozenset[str]
    ignored: frozenset[str]


def _cpu_unready(
    pod: PodInfo, metric: PodMetric, now_s: float, cpu_init_s: float, readiness_delay_s: float
) -> bool:
    if pod.ready is None or pod.start_s is None:
        return True
    not_ready = pod.ready is ConditionStatus.FALSE
    if pod.start_s + cpu_init_s > now_s:
        # Inside the initialization period: trust only a ready pod whose sample window began after
        # it became ready.
        return not_ready or metric.timestamp_s < pod.ready_transition_s + metric.window_s
    # After it: drop a not-ready pod that has never been ready.
    return not_ready and pod.start_s + readiness_delay_s > pod.ready_transition_s


def group_pods(
    pods: tuple[PodInfo, ...],
    metrics: Mapping[str, PodMetric],
    resource: str,
    now_s: float,
    cpu_init_s: float,
    readiness_delay_s: float,
) -> PodGroups:
    """``groupPods``: ready count and the unready, missing and ignored pod names."""
    num_ready = 0
    unready: set[str] = set()
    missing: set[str] = set()
    ignored: set[str] = set()
    for pod in pods:
        if pod.deleted or pod.phase is PodPhase.FAILED:
            ignored.add(pod.name)
            continue
        if pod.phase is PodPhase.PENDING:
            unready.add(pod.name)
            continue
        metric = metrics.get(pod.name)
        if metric is None:
            missing.add(pod.name)
            continue
        if resource == CPU and _cpu_unready(pod, metric, now_s, cpu_init_s, readiness_delay_s):
            unready.add(pod.name)
            continue
        num_ready += 1
    return PodGroups(num_ready, frozenset(unready), frozenset(missing), frozenset(ignored))


class MissingRequestError(Exception):
    """A pod lacks the request a Utilization target is computed against."""


def pod_request(pod: PodInfo, container: str, resource: str, pod_level_enabled: bool) -> int:
    """``calculateRequests`` for one pod: its request of ``resource`` in milli-units.

    Pod-level requests win when the PodLevelResources gate is on, the pod sets them and no
    container is named; otherwise the containers (and restartable init containers) are summed,
    or only the named container is read.
    """
    if pod_level_enabled and pod.pod_requests_milli and not container:
        value = dict(pod.pod_requests_milli).get(resource)
        if value is not None:
            return value
        # Resources the pod does not set at pod level are aggregated from its containers.
        values = [v for c in pod.containers if (v := c.request(resource)) is not None]
        if not values:
            raise MissingRequestError(f"missing pod-level request for {resource} in Pod {pod.name}")
        return sum(values)
    candidates = list(pod.containers) + [c for c in pod.init_containers if c.restartable]
    total = 0
    for c in candidates:
        if not container or container == c.name:
            value = c.request(resource)
            if value is None:
                raise MissingRequestError(
                    f"missing request for {resource} in container {c.name} of Pod {pod.name}"
                )
            total += value
        if container == c.name:
            return total
    if container:
        raise MissingRequestError(f"container {container} not found in Pod {pod.name}")
    return total


def ready_pod_count(pods: tuple[PodInfo, ...]) -> int:
    """``getReadyPodsCount``: running pods whose Ready condition is True."""
    return sum(1 for p in pods if p.is_ready())
