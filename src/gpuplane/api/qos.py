"""``QosClass`` (k8s.io/api core/v1 ``PodQOSClass``) and the rule that gives a pod its class.

kubernetes/kubernetes ``pkg/apis/core/v1/helper/qos/qos.go`` ``GetPodQOS`` @ 0c4236dd (read
through the code index), on the pod's requests after API-server defaulting (a limit without a
request sets the request, which ``gpuplane.k8s`` applies when it reads a manifest):

- only cpu and memory count, and only quantities above zero;
- requests and limits are summed over app *and* init containers;
- no request and no limit anywhere: BestEffort;
- Guaranteed when every container (init containers included) has both a cpu and a memory limit
  and the summed requests equal the summed limits for the same set of resources;
- anything else: Burstable.

Quantities are canonical integers (millicores rounded up, bytes), so two requests that differ
below a millicore compare equal here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum

from gpuplane.api.resources import CPU, MEMORY

_QOS_RESOURCES = (CPU, MEMORY)


class QosClass(StrEnum):
    GUARANTEED = "Guaranteed"
    BURSTABLE = "Burstable"
    BEST_EFFORT = "BestEffort"


def _add_positive(total: dict[str, int], amounts: Mapping[str, int]) -> set[str]:
    found: set[str] = set()
    for name in _QOS_RESOURCES:
        value = amounts.get(name, 0)
        if value > 0:
            total[name] = total.get(name, 0) + value
            found.add(name)
    return found


def pod_qos_class(containers: Iterable[tuple[Mapping[str, int], Mapping[str, int]]]) -> QosClass:
    """``GetPodQOS`` over every container's ``(requests, limits)``, init containers included."""
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    guaranteed = True
    for container_requests, container_limits in containers:
        _add_positive(requests, container_requests)
        if _add_positive(limits, container_limits) != set(_QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return QosClass.BEST_EFFORT
    if guaranteed and requests == limits:
        return QosClass.GUARANTEED
    return QosClass.BURSTABLE
