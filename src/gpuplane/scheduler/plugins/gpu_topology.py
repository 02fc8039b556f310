"""GPUTopology: score nodes by the interconnect a multi-GPU pod would actually get there.

gpuplane's plugin (kube-scheduler has none: it counts ``nvidia.com/gpu`` and never looks at
which GPUs are free). For a pod asking for N whole GPUs, each feasible node is scored on the
best set of N of its free GPUs (``gpuplane.kubelet.gpu_sets.pick_gpus``, the choice a
gpuplane-aware device plugin makes): the bottleneck bandwidth of its best all-reduce ring,
normalised by the best such bottleneck among the feasible nodes, so an NVLink island beats GPUs
split over PCIe or sockets and an NVSwitch node beats a PCIe-only one. On nodes whose kubelet
runs ``single-numa-node`` (read from the node's NodeResourceTopology) the set must sit on one
NUMA node, or the node scores 0.

Multi-GPU pods: score = (100 - ``packingWeight``) x bandwidth ratio + ``packingWeight`` x
packing, where packing is the share of the node's GPUs in use once the pod is placed (ties go to
fuller nodes). Single-GPU pods need no interconnect, so they are steered away from what later
multi-GPU pods need: score = (100 - ``nvlinkAvoidanceWeight``) x packing +
``nvlinkAvoidanceWeight`` x (1 - the node's best free GPU-pair bandwidth relative to the best
among the feasible nodes): fill partly used nodes, and PCIe-only nodes before NVLink ones. Pods
without whole GPUs score 100 everywhere (the plugin is neutral for them).
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.kubelet.gpu_sets import pick_gpus
from gpuplane.scheduler.framework.interfaces import SCORE, Handle
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.types import MILLI_PER_GPU, IntArray, PodInfo
from gpuplane.topology.model import NodeTopology
from gpuplane.topology.nrt import TopologyManagerPolicy


class GPUTopologyArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    packing_weight: int = Field(default=10, ge=0, le=100, alias="packingWeight")
    nvlink_avoidance_weight: int = Field(default=40, ge=0, le=100, alias="nvlinkAvoidanceWeight")


class GPUTopology:
    name: ClassVar[str] = "GPUTopology"
    extension_points: ClassVar[frozenset[str]] = frozenset({SCORE})
    unsupported: ClassVar[tuple[str, ...]] = ("GPUs spread over several nodes (multi-node TP)",)

    def __init__(self, args: BaseModel | None, handle: Handle) -> None:
        config = args if isinstance(args, GPUTopologyArgs) else GPUTopologyArgs()
        self.w_pack = config.packing_weight
        self.w_avoid = config.nvlink_avoidance_weight

    def _node(self, st: ClusterState, i: int) -> tuple[NodeTopology, list[int], int] | None:
        topo = st.snap.hardware.get(st.name_of(i))
        row = st.gpu[i]
        total = int(np.count_nonzero(row >= 0))
        if topo is None or total == 0:
            return None
        return topo, [int(g) for g in np.flatnonzero(row == MILLI_PER_GPU)], total

    def _pick(self, pod: PodInfo, st: ClusterState, i: int) -> tuple[float, float] | None:
        """(bottleneck GB/s of the best set, used share after placing) or None: no aligned set.
        For one GPU, the bottleneck is the best free pair's (what the node keeps for others)."""
        need = int(pod.requests.get(NVIDIA_GPU, 0))
        node = self._node(st, i)
        if node is None or len(node[1]) < need:
            return None
        topo, free, total = node
        nrt = st.snap.nrt.get(st.name_of(i)) if st.snap.nrt else None
        aligned = nrt is not None and nrt.policy is TopologyManagerPolicy.SINGLE_NUMA_NODE
        used_after = (total - len(free) + need) / total
        if need == 1:
            pair = pick_gpus(topo, free, 2) if len(free) >= 2 else None
            return (pair.bottleneck_gbps if pair is not None else 0.0), used_after
        pick = pick_gpus(topo, free, need, numa_aligned=aligned)
        if pick is None:
            return None
        return pick.bottleneck_gbps, used_after

    def _scores(self, pod: PodInfo, st: ClusterState, nodes: IntArray) -> IntArray:
        need = int(pod.requests.get(NVIDIA_GPU, 0))
        if not need:
            return np.full(len(nodes), 100, dtype=np.int64)
        picks = [self._pick(pod, st, int(i)) for i in nodes]
        finite = [p[0] for p in picks if p is not None and math.isfinite(p[0])]
        best = max(finite) if finite else 0.0
        out = np.zeros(len(nodes), dtype=np.int64)
        for k, p in enumerate(picks):
            if p is None:
                continue
            bottleneck, packing = p
            ratio = 1.0 if not math.isfinite(bottleneck) or best <= 0 else bottleneck / best
            if need == 1:
                value = (100 - self.w_avoid) * packing + self.w_avoid * (1.0 - ratio)
            else:
                value = (100 - self.w_pack) * ratio + self.w_pack * packing
            out[k] = round(value)
        return out

    def score(self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray) -> IntArray:
        return self._scores(pod, st, nodes)

    def score_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> int:
        """Alone, a node is its own best: the bandwidth ratio is 1 whenever a set exists."""
        return int(self._scores(pod, st, np.array([i], dtype=np.int64))[0])
