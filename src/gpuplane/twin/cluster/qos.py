"""A pod's QoS class from its template, by ``gpuplane.api.qos.pod_qos_class`` (``GetPodQOS``)."""

from __future__ import annotations

from gpuplane.api.qos import QosClass, pod_qos_class
from gpuplane.fit.workload_objects import PodTemplate


def qos_class(template: PodTemplate) -> QosClass:
    """The QoS class of pods stamped from ``template``."""
    containers = (*template.containers, *template.init_containers)
    return pod_qos_class((c.requests, c.limits) for c in containers)
