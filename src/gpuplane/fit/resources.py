"""Resource arithmetic on the canonical integer maps of ``fit.workload_objects``.

A pod's effective request follows the kube-scheduler / kubelet rule
(``resource.PodRequests``): for each resource, the larger of the sum over app containers and the
largest init container, plus pod overhead.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpuplane.fit.workload_objects import PodTemplate, Resources


def add(a: Resources, b: Resources) -> Resources:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


def sub(a: Resources, b: Resources) -> Resources:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) - v
    return out


def total(items: Iterable[Resources]) -> Resources:
    out: Resources = {}
    for r in items:
        for k, v in r.items():
            out[k] = out.get(k, 0) + v
    return out


def pod_requests(template: PodTemplate) -> Resources:
    app = total(c.requests for c in template.containers)
    for init in template.init_containers:
        for k, v in init.requests.items():
            if v > app.get(k, 0):
                app[k] = v
    return {k: v for k, v in add(app, template.overhead).items() if v}


def fits(requests: Resources, free: Resources) -> list[str]:
    """Resources that do not fit, as ``Insufficient <name>`` reasons (kube-scheduler wording)."""
    return [f"Insufficient {k}" for k, v in sorted(requests.items()) if v > free.get(k, 0)]
