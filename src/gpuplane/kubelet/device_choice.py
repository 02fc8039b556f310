"""Which free GPUs a container gets: the device plugin's GetPreferredAllocation, per policy.

The kubelet's device manager (devicesToAllocate) first narrows the free devices to those inside
the Topology Manager's NUMA affinity when enough of them are free, and asks the plugin for its
preference among them; ``admission._allocate`` does that narrowing and calls the chooser made
here. ``GpuAllocation`` names the policies (see ``gpuplane.kubelet.config``).

go-gpuallocator's best-effort policy enumerates every partition of the free devices into groups
of the requested size. That is cheap on 8-GPU nodes (at most 105 partitions) and explodes past
them (over two million for pairs among 16 devices); on nodes with more than
``BEST_EFFORT_MAX_DEVICES`` free devices the chooser uses gpuplane's exact widest-ring choice
instead and says so in ``docs/kubelet.md``. The real plugin has no such limit (it is simply slow).
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuplane.kubelet.admission import GpuChooser
from gpuplane.kubelet.config import GpuAllocation
from gpuplane.kubelet.gpu_sets import pick_gpus
from gpuplane.kubelet.gpuallocator import best_effort
from gpuplane.topology.model import NodeTopology

BEST_EFFORT_MAX_DEVICES = 10


def gpu_chooser(topo: NodeTopology, policy: GpuAllocation) -> GpuChooser:
    """A function (candidates, size) -> chosen GPU indices or None, for one node."""

    def first(cands: Sequence[int], size: int) -> Sequence[int] | None:
        ordered = sorted(cands)
        return ordered[:size] if len(ordered) >= size else None

    def widest(cands: Sequence[int], size: int) -> Sequence[int] | None:
        pick = pick_gpus(topo, cands, size)
        return None if pick is None else pick.gpus

    def nvidia(cands: Sequence[int], size: int) -> Sequence[int] | None:
        if len(cands) < size:
            return None
        if len(cands) > BEST_EFFORT_MAX_DEVICES and size > 1:
            return widest(cands, size)
        got = best_effort(topo, cands, (), size)
        return got or None

    if policy is GpuAllocation.FIRST:
        return first
    if policy is GpuAllocation.GPUPLANE:
        return widest
    return nvidia
