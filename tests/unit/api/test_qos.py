"""GetPodQOS on containers' (requests, limits); the manifest-level table is in tests/unit/k8s."""

from __future__ import annotations

from gpuplane.api.qos import QosClass, pod_qos_class

GIB = 2**30


def test_no_cpu_or_memory_anywhere_is_best_effort() -> None:
    assert pod_qos_class([({"nvidia.com/gpu": 1}, {"nvidia.com/gpu": 1})]) is QosClass.BEST_EFFORT
    assert pod_qos_class([]) is QosClass.BEST_EFFORT


def test_equal_cpu_and_memory_limits_in_every_container_are_guaranteed() -> None:
    full = ({"cpu": 1000, "memory": GIB}, {"cpu": 1000, "memory": GIB})
    assert pod_qos_class([full, full]) is QosClass.GUARANTEED
    assert pod_qos_class([full, ({}, {})]) is QosClass.BURSTABLE  # one container without limits
    assert pod_qos_class([({"cpu": 500}, {"cpu": 1000, "memory": GIB})]) is QosClass.BURSTABLE
