"""What a pod may declare about the GPU set it needs, beyond a count.

The ``k8s`` side reads them from the pod's annotations (docs/live.md):

- ``gpuplane.io/nvlink-island: "true"``: every pair of the pod's GPUs is joined by NVLink
  (``NV#`` in ``nvidia-smi topo -m``), so no collective crosses PCIe or the CPU interconnect;
- ``gpuplane.io/min-ring-gbps: "300"``: the widest all-reduce ring over the pod's GPUs has a
  bottleneck of at least this many GB/s per direction.

A node is kept only if the GPU set its kubelet would give the pod meets them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from gpuplane.topology.links import LinkClass
from gpuplane.topology.model import NodeTopology

NVLINK_ISLAND_ANNOTATION = "gpuplane.io/nvlink-island"
MIN_RING_ANNOTATION = "gpuplane.io/min-ring-gbps"


@dataclass(frozen=True, slots=True)
class GpuNeeds:
    nvlink_island: bool = False
    min_ring_gbps: float | None = None

    @property
    def any(self) -> bool:
        return self.nvlink_island or self.min_ring_gbps is not None

    def unmet(self, topo: NodeTopology, gpus: Sequence[int], bottleneck_gbps: float) -> str:
        """What of the needs the set ``gpus`` misses, as a short phrase ("" when it meets all)."""
        if self.nvlink_island and not all_nvlink(topo, gpus):
            return "not one NVLink island"
        if (
            self.min_ring_gbps is not None
            and len(gpus) > 1
            and bottleneck_gbps < self.min_ring_gbps
        ):
            return f"ring {bottleneck_gbps:g} GB/s < {self.min_ring_gbps:g}"
        return ""

    def describe(self) -> str:
        parts = []
        if self.nvlink_island:
            parts.append("an NVLink island")
        if self.min_ring_gbps is not None:
            parts.append(f"a {self.min_ring_gbps:g} GB/s ring")
        return " with ".join(parts)


def all_nvlink(topo: NodeTopology, gpus: Sequence[int]) -> bool:
    return all(topo.links[a][b].cls is LinkClass.NV for a, b in combinations(gpus, 2))
