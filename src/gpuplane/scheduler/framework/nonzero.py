"""Non-zero requests for scoring (kube-scheduler: pkg/scheduler/util/pod_resources.go,
``GetNonzeroRequests``, ``DefaultMilliCPURequest``, ``DefaultMemoryRequest``; used by
noderesources/resource_allocation.go when ``useRequested`` is false and by NodeInfo's
``NonZeroRequested``).

Least- and MostAllocated scoring would see a pod that requests no cpu or memory as free, so
packing many of them on one node would look harmless. kube therefore scores such a pod as if it
requested 100m cpu and 200 MB (200 * 1024 * 1024 bytes) of memory, on both sides: the incoming
pod's request and the node's requested sum over the pods already on it. Filtering is not affected.

gpuplane applies the default per pod, to a request the pod does not make at all (no ``cpu`` or
``memory`` key in its summed requests). v1.31 applies it per container
(``NonMissingContainerRequests``); the two differ only for a pod some of whose containers request
cpu (or memory) while others do not, which gpuplane scores without the defaults.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuplane.api.resources import CPU, MEMORY

DEFAULT_MILLI_CPU_REQUEST = 100  # 0.1 core
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # 200 MB


def nonzero_extra(requests: Mapping[str, int]) -> tuple[int, int]:
    """What scoring adds to a pod's (cpu millicores, memory bytes) requests: the default for a
    resource it does not request, else nothing."""
    cpu = DEFAULT_MILLI_CPU_REQUEST if CPU not in requests else 0
    memory = DEFAULT_MEMORY_REQUEST if MEMORY not in requests else 0
    return cpu, memory


def nonzero_request(requests: Mapping[str, int], resource: str) -> int:
    """The pod's request of ``resource`` as kube's scoring reads it."""
    if resource == CPU:
        return requests.get(CPU, DEFAULT_MILLI_CPU_REQUEST)
    if resource == MEMORY:
        return requests.get(MEMORY, DEFAULT_MEMORY_REQUEST)
    return requests.get(resource, 0)
