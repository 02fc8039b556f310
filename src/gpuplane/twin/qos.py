"""Pod QoS class as Kubernetes computes it (pkg/apis/core/v1/helper/qos GetPodQOS).

Only cpu and memory count, over init and app containers: no cpu/memory request or limit
anywhere -> BestEffort; every container with cpu and memory limits equal to its requests ->
Guaranteed; anything else -> Burstable.
"""

from __future__ import annotations

from gpuplane.twin.spec import CPU, MEMORY, PodTemplate, QosClass

_COMPUTE = (CPU, MEMORY)


def qos_class(template: PodTemplate) -> QosClass:
    containers = (*template.init_containers, *template.containers)
    any_set = False
    guaranteed = True
    for c in containers:
        for r in _COMPUTE:
            req, lim = c.requests.get(r, 0), c.limits.get(r, 0)
            if req or lim:
                any_set = True
            if not lim or req != lim:
                guaranteed = False
    if not any_set:
        return QosClass.BEST_EFFORT
    return QosClass.GUARANTEED if guaranteed and containers else QosClass.BURSTABLE
