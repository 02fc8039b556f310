"""The mutable cluster state of one simulated run: the owner of the policies' NodeArrays.

Besides the arrays the policies read it keeps, per node, the largest free GPU and the number of
fully free GPUs (so the filter of fgd-openb.md §2 is a few vector comparisons), and a change
stamp that score caches compare against (``score_cache``).
"""

from __future__ import annotations

import numpy as np

from gpuplane.scheduler.openb.trace import NodeTable
from gpuplane.scheduler.policies.types import (
    MILLI_PER_GPU,
    NUM_TAGS,
    BoolArray,
    IntArray,
    NodeArrays,
    PodRequest,
)


class ClusterState:
    """Free CPU, memory and GPU milli of every node; placements applied in place."""

    def __init__(self, nodes: NodeTable) -> None:
        num_nodes, slots = nodes.num_nodes, nodes.max_gpus
        gpu_left = np.zeros((num_nodes, slots), dtype=np.int64)
        gpu_left[np.arange(slots)[None, :] < nodes.num_gpus[:, None]] = MILLI_PER_GPU
        self.arrays = NodeArrays(
            cpu_left=nodes.cpu_milli.copy(),
            mem_left=nodes.mem_mib.copy(),
            gpu_left=gpu_left,
            num_gpus=nodes.num_gpus.copy(),
            model=nodes.model.copy(),
            tag_counts=np.zeros((num_nodes, NUM_TAGS), dtype=np.int64),
        )
        self.max_free = gpu_left.max(axis=1)
        self.num_full = (gpu_left == MILLI_PER_GPU).sum(axis=1)
        # changed_at[n]: value of ``clock`` right after node n last changed (0: never).
        self.changed_at = np.zeros(num_nodes, dtype=np.int64)
        self.clock = 0

    def feasible(self, pod: PodRequest, model_ok: BoolArray | None) -> BoolArray:
        """Nodes that can host ``pod`` now; ``model_ok`` = the pod's model mask (None: any)."""
        arrays = self.arrays
        ok: BoolArray = (arrays.cpu_left >= pod.cpu_milli) & (arrays.mem_left >= pod.mem_mib)
        if pod.num_gpu == 0:
            return ok
        if model_ok is not None:
            ok &= model_ok
        gpu_ok: BoolArray = (
            self.max_free >= pod.gpu_milli if pod.is_share else self.num_full >= pod.num_gpu
        )
        return ok & gpu_ok

    def place(self, node: int, pod: PodRequest, gpus: tuple[int, ...]) -> None:
        arrays = self.arrays
        arrays.cpu_left[node] -= pod.cpu_milli
        arrays.mem_left[node] -= pod.mem_mib
        if pod.num_gpu:
            row = arrays.gpu_left[node]
            for gpu in gpus:
                row[gpu] -= pod.gpu_milli
            if row.min() < 0:
                raise ValueError(f"GPU over-allocated on node {node}: {row.tolist()}")
            self.max_free[node] = row.max()
            self.num_full[node] = int((row == MILLI_PER_GPU).sum())
            arrays.tag_counts[node, pod.tag] += 1
        if arrays.cpu_left[node] < 0 or arrays.mem_left[node] < 0:
            raise ValueError(f"CPU or memory over-allocated on node {node}")
        self.clock += 1
        self.changed_at[node] = self.clock

    @property
    def used_gpu_milli(self) -> int:
        return int(self.arrays.num_gpus.sum()) * MILLI_PER_GPU - int(self.arrays.gpu_left.sum())


def model_mask(models: frozenset[int] | None, node_model: IntArray) -> BoolArray | None:
    if models is None:
        return None
    return np.isin(node_model, np.array(sorted(models), dtype=np.int64))
