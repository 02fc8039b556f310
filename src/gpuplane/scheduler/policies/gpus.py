"""Feasibility, GPU choice and node selection shared by the policies (fgd-openb.md §2-3)."""

from __future__ import annotations

import numpy as np

from gpuplane.scheduler.policies.types import (
    MILLI_PER_GPU,
    BoolArray,
    IntArray,
    NodeArrays,
    PodRequest,
)

# Larger than any free milli, so masked-out GPUs never win a minimum.
_NO_GPU = np.int64(1 << 40)


def model_mask(nodes: NodeArrays, pod: PodRequest) -> BoolArray:
    """Nodes whose GPU model the pod accepts (all nodes for CPU-only or unconstrained pods)."""
    if pod.num_gpu == 0 or pod.models is None:
        return np.ones(nodes.num_nodes, dtype=np.bool_)
    return np.isin(nodes.model, np.fromiter(pod.models, dtype=np.int64, count=len(pod.models)))


def feasible(nodes: NodeArrays, pod: PodRequest) -> BoolArray:
    """The simulator's filter (fgd-openb.md §2): CPU, memory, GPU model and GPU capacity.

    A share pod needs one GPU with enough free milli; a pod of k whole GPUs needs k fully free
    GPUs. Memory appears only here: no score uses it.
    """
    ok: BoolArray = (nodes.cpu_left >= pod.cpu_milli) & (nodes.mem_left >= pod.mem_mib)
    ok &= model_mask(nodes, pod)
    if pod.num_gpu == 0:
        return ok
    enough: BoolArray = (nodes.gpu_left >= pod.gpu_milli).sum(axis=1) >= pod.num_gpu
    return ok & enough


def best_gpu_choice(gpu_left: IntArray, pod: PodRequest) -> IntArray:
    """GPU choice "best" (fgd-openb.md §3) per row of ``gpu_left``: the tightest GPU for a
    share pod; -1 for other pods (they take the lowest-index fully free GPUs at allocation)."""
    if pod.is_share:
        return tightest_gpu(gpu_left, pod.gpu_milli)
    return np.full(gpu_left.shape[0], -1, dtype=np.int64)


def tightest_gpu(gpu_left: IntArray, milli: int) -> IntArray:
    """GPU choice "best" for a share pod: the GPU with the least free milli that still fits,
    lowest index on ties (argmin returns the first minimum). Rows where none fits get -1."""
    masked = np.where(gpu_left >= milli, gpu_left, _NO_GPU)
    choice = masked.argmin(axis=1).astype(np.int64)
    return np.where(masked.min(axis=1) == _NO_GPU, -1, choice)


def whole_gpus(gpu_row: IntArray, num_gpu: int) -> tuple[int, ...]:
    """The lowest-index fully free GPUs of one node (every policy's rule for whole-GPU pods)."""
    free = np.flatnonzero(gpu_row == MILLI_PER_GPU)[:num_gpu]
    if free.shape[0] < num_gpu:
        raise ValueError(f"node has {free.shape[0]} fully free GPUs, pod needs {num_gpu}")
    return tuple(int(g) for g in free)


def take_whole_gpus(gpu_left: IntArray, num_gpu: int) -> IntArray:
    """``gpu_left`` rows after taking each row's ``num_gpu`` lowest-index fully free GPUs."""
    full = gpu_left == MILLI_PER_GPU
    taken = full & (np.cumsum(full, axis=1) <= num_gpu)
    return np.where(taken, 0, gpu_left)


def select_position(scores: IntArray, idx: IntArray, rank: IntArray) -> int:
    """Position in ``idx`` of the node with the highest score; ties go to the smallest
    priority ``rank`` (indexed by node id).

    This is the simulator's modified `selectHost` (fgd-openb.md §2 step 5): the lexicographically
    smallest node name among the best, where names carry the per-seed random prefix, i.e. a
    fixed random node order for the whole run, the same for every pod.
    """
    best = np.flatnonzero(scores == scores.max())
    return int(best[np.argmin(rank[idx[best]])])


def select_node(scores: IntArray, idx: IntArray, rank: IntArray) -> int:
    """Node id chosen by ``select_position``."""
    return int(idx[select_position(scores, idx, rank)])
