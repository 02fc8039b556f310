"""``QosClass`` (k8s.io/api core/v1 ``PodQOSClass``), the class the API server gives a pod from
its containers' requests and limits (pkg/apis/core/helper/qos: ``GetPodQOS``)."""

from __future__ import annotations

from enum import StrEnum


class QosClass(StrEnum):
    GUARANTEED = "Guaranteed"
    BURSTABLE = "Burstable"
    BEST_EFFORT = "BestEffort"
