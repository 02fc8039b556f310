"""What a GPU out-of-memory does to the pods sharing one physical GPU, per sharing mechanism.

- time-slicing: every process sees the whole GPU memory; nothing stops one from taking what the
  others need. When the pods' combined demand exceeds the GPU's memory, allocations fail in
  whichever process asks next; in practice the CUDA contexts on the GPU die together (the
  failure mode NVIDIA's own time-slicing documentation warns about: no memory isolation). The
  decision: every pod on that GPU is hit.
- MPS: the device plugin starts the MPS control daemon with a pinned device-memory limit per
  client of (GPU memory / replicas) and an active-thread percentage of 100 / replicas. A client
  whose demand exceeds its limit fails alone; the others are protected.
- MIG: each instance has its own memory; a pod fails alone when it asks for more than its
  instance holds.

``demand`` is each pod's peak GPU memory in bytes (the twin reads it from the pod's
``gpuplane.io/gpu-memory`` annotation).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpuplane.api.strategies import SharingStrategy


@dataclass(frozen=True, slots=True)
class OomVerdict:
    victims: tuple[str, ...]
    reason: str = ""


def mps_client_limit_bytes(gpu_memory_bytes: int, replicas: int) -> int:
    """CUDA_MPS_PINNED_DEVICE_MEM_LIMIT the plugin sets per client."""
    return gpu_memory_bytes // max(replicas, 1)


def mps_thread_percentage(replicas: int) -> int:
    """CUDA_MPS_ACTIVE_THREAD_PERCENTAGE the plugin sets per client."""
    return 100 // max(replicas, 1)


def shared_gpu_oom(
    strategy: SharingStrategy,
    gpu_memory_bytes: int,
    replicas: int,
    demand: Mapping[str, int],
) -> OomVerdict:
    """Which of the pods on one physical GPU fail (``demand``: pod uid -> bytes), and why."""
    if strategy is SharingStrategy.MPS:
        limit = mps_client_limit_bytes(gpu_memory_bytes, replicas)
        over = tuple(sorted(uid for uid, d in demand.items() if d > limit))
        reason = f"CUDA out of memory: MPS client limit {limit} bytes" if over else ""
        return OomVerdict(over, reason)
    total = sum(demand.values())
    if total > gpu_memory_bytes:
        return OomVerdict(
            tuple(sorted(demand)),
            f"CUDA out of memory: {total} bytes wanted on a {gpu_memory_bytes}-byte GPU shared "
            "by time-slicing",
        )
    return OomVerdict(())


def mig_oom(instance_memory_bytes: int, demand: Mapping[str, int]) -> OomVerdict:
    over = tuple(sorted(uid for uid, d in demand.items() if d > instance_memory_bytes))
    reason = f"CUDA out of memory: MIG instance holds {instance_memory_bytes} bytes" if over else ""
    return OomVerdict(over, reason)
