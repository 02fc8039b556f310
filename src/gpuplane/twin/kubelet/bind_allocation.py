"""What a pod gets when it binds, decided once at binding and read by whoever needs it after.

At binding the twin charges the pod to its node with concrete devices, which are the kubelet's
choice, not the scheduler's (kube-scheduler only counts whole GPUs): on a node whose kubelet
manages resources (a Topology Manager policy, the static CPU or memory manager) the device
manager allocates inside the NUMA affinity that admission chooses, so that verdict is computed
here too, and the kubelet holds its exclusive CPUs from binding until it admits the pod. The
scheduling loop builds this value (``NodeAdmission.at_bind``), charges it to the store and hands
it to the kubelet simulator; nothing is cached per pod in between.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpuplane.kubelet.admission import AdmitResult


@dataclass(frozen=True, slots=True)
class BindAllocation:
    """A pod's devices on ``node`` and the kubelet's verdict at binding."""

    node: str
    # Whole GPUs (nvidia.com/gpu devices: GPUs, or replicas of a sharing device plugin).
    gpu_ids: tuple[int, ...] = ()
    # (GPU index, milli) of a fractional pod.
    gpu_share: tuple[int, int] | None = None
    # Devices of the pod's other device resources (nvidia.com/gpu.shared, MIG), by resource.
    ext_devices: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    # Devices the pod's ResourceClaims hold on the node (DRA), by device name.
    dra_devices: tuple[str, ...] = ()
    # The kubelet's admission verdict at binding; None where the kubelet manages no resources
    # (nothing there can refuse a pod that fits).
    admission: AdmitResult | None = None

    @property
    def cpu_hold(self) -> tuple[int, ...]:
        """The exclusive CPUs the kubelet holds for the pod until it admits it (none when the
        verdict refuses the pod)."""
        verdict = self.admission
        if verdict is None or not verdict.admit:
            return ()
        return tuple(sorted({c for a in verdict.allocations.values() for c in a.cpus}))
