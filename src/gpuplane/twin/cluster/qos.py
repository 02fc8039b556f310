"""A pod's QoS class, computed as Kubernetes does.

kubernetes/kubernetes ``pkg/apis/core/v1/helper/qos/qos.go`` ``GetPodQOS`` @ 0c4236dd (read
through the code index), on the pod's requests after API-server defaulting (a limit without a
request sets the request, which ``gpuplane.k8s`` applies when it reads a manifest):

- only cpu and memory count, and only quantities above zero;
- requests and limits are summed over app *and* init containers;
- no request and no limit anywhere: BestEffort;
- Guaranteed when every container (init containers included) has both a cpu and a memory limit
  and the summed requests equal the summed limits for the same set of resources;
- anything else: Burstable.

The twin's quantities are canonical integers (millicores rounded up, bytes), so two requests that
differ below a millicore compare equal here.
"""

from __future__ import annotations

from gpuplane.api.qos import QosClass
from gpuplane.api.resources import CPU, MEMORY
from gpuplane.twin.scenario.spec import PodTemplate, Resources

_QOS_RESOURCES = (CPU, MEMORY)


def _add_positive(total: Resources, amounts: Resources) -> set[str]:
    found: set[str] = set()
    for name in _QOS_RESOURCES:
        value = amounts.get(name, 0)
        if value > 0:
            total[name] = total.get(name, 0) + value
            found.add(name)
    return found


def qos_class(template: PodTemplate) -> QosClass:
    """The QoS class of pods stamped from ``template``."""
    requests: Resources = {}
    limits: Resources = {}
    guaranteed = True
    for container in (*template.containers, *template.init_containers):
        _add_positive(requests, container.requests)
        if _add_positive(limits, container.limits) != set(_QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return QosClass.BEST_EFFORT
    if guaranteed and requests == limits:
        return QosClass.GUARANTEED
    return QosClass.BURSTABLE
