"""Resource names as the API server and the NVIDIA device plugin spell them.

``cpu``, ``memory``, ``ephemeral-storage`` and ``pods`` are core/v1 ``ResourceName`` values; the
device plugin advertises whole GPUs as ``nvidia.com/gpu`` and, under the mixed MIG strategy, each
MIG profile as ``nvidia.com/mig-<profile>`` (k8s-device-plugin ``internal/rm``).
"""

from __future__ import annotations

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"
NVIDIA_GPU = "nvidia.com/gpu"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"


def mig_resource(suffix: str) -> str:
    """The mixed strategy's resource for a profile's resource suffix (``3g.40gb`` ->
    ``nvidia.com/mig-3g.40gb``; ``+me`` profiles are passed already written ``.me``)."""
    return MIG_RESOURCE_PREFIX + suffix


def is_mig_resource(name: str) -> bool:
    return name.startswith(MIG_RESOURCE_PREFIX)


def mig_profile_of(name: str) -> str:
    """The profile part of a MIG resource name (``nvidia.com/mig-1g.10gb`` -> ``1g.10gb``)."""
    return name.removeprefix(MIG_RESOURCE_PREFIX)
