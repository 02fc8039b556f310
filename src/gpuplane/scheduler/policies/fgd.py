"""FGD, Fragmentation Gradient Descent (fgd-openb.md §3, ``-FGD 1000 -gpusel FGD``).

score = int(100 sigmoid((F_before - F_after) / 1000)), F the node's expected fragmentation
(``frag.node_frag``) and F_after the state after placing the pod (its CPU included). A share
pod tries every GPU with enough free milli; the node's score is the best *integer* score and the
GPU is the lowest-index one reaching it (GPUs compare on the truncated score). Whole-GPU pods
remove their GPUs from the fully free ones (which ones does not change F).

Speed: GPUs of one node with the same free milli give the same state, so each distinct value is
evaluated once, at its lowest index, which is the GPU the simulator would pick among them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuplane.scheduler.policies.frag import node_frag
from gpuplane.scheduler.policies.gpus import take_whole_gpus
from gpuplane.scheduler.policies.types import (
    MAX_SCORE,
    FloatArray,
    IntArray,
    NodeArrays,
    NodeScores,
    PodRequest,
    TypicalPods,
)

# _EARLIER[g, h]: GPU slot h comes before slot g.
_EARLIER = np.tril(np.ones((64, 64), dtype=np.bool_), k=-1)


def sigmoid_score(delta: FloatArray) -> IntArray:
    """int(100 sigmoid(delta / 1000)), truncated toward zero (fgd_score.go, plugin_utils.go)."""
    with np.errstate(over="ignore"):  # exp overflows to inf for huge losses: score 0, as in Go
        sig = 1.0 / (1.0 + np.exp(-(delta / 1000.0)))
    return (sig * float(MAX_SCORE)).astype(np.int64)


def share_candidates(gpu_left: IntArray, milli: int) -> tuple[IntArray, IntArray]:
    """(row, gpu) of the GPUs a share pod could take, one per distinct free value and row,
    at its lowest index; sorted by row, then GPU index."""
    num_slots = gpu_left.shape[1]
    same = gpu_left[:, :, None] == gpu_left[:, None, :]
    repeated = (same & _EARLIER[None, :num_slots, :num_slots]).any(axis=2)
    row, gpu = np.nonzero((gpu_left >= milli) & ~repeated)
    return row.astype(np.int64), gpu.astype(np.int64)


def best_per_row(
    row: IntArray, gpu: IntArray, score: IntArray, num_rows: int
) -> tuple[IntArray, IntArray]:
    """Per row 0..num_rows-1 (candidates sorted by row, then GPU): the best score and the
    lowest GPU index reaching it. A row without a candidate scores 0 with GPU -1: a node whose
    filter passed on the node's sum (NodeResourcesFit counts ``gpuplane.io/gpu-milli`` over the
    node, not per GPU) but where no single GPU can take a share pod; FGD's own filter would have
    removed it, so the lowest score is the honest one."""
    best = np.zeros(num_rows, dtype=np.int64)
    best_gpu = np.full(num_rows, -1, dtype=np.int64)
    if row.shape[0] == 0:
        return best, best_gpu
    starts = np.flatnonzero(np.concatenate(([True], row[1:] != row[:-1])))
    best[row[starts]] = np.maximum.reduceat(score, starts)
    winners = np.flatnonzero(score == best[row])
    rows, first = np.unique(row[winners], return_index=True)
    best_gpu[rows] = gpu[winners[first]]
    return best, best_gpu


@dataclass(frozen=True, slots=True)
class Candidates:
    """Every placement FGD evaluates for one pod: the state after it and F before - F after.

    ``row`` indexes the scored nodes (sorted, each at least once); ``gpu`` is the share GPU
    (-1 for other pods); ``cpu_after``/``gpu_after`` describe the node after the placement.
    """

    row: IntArray
    gpu: IntArray
    cpu_after: IntArray
    gpu_after: IntArray
    delta: FloatArray


def fgd_candidates(
    nodes: NodeArrays,
    pod: PodRequest,
    idx: IntArray,
    typical: TypicalPods,
    frag: FloatArray | None = None,
) -> Candidates:
    """FGD's candidate placements on nodes ``idx`` (all feasible, at least one). ``frag``: F of
    every node by node id, or None to compute F_before here."""
    cpu = nodes.cpu_left[idx]
    gpu_left = nodes.gpu_left[idx]
    model = nodes.model[idx]
    before = node_frag(cpu, gpu_left, model, typical) if frag is None else frag[idx]
    if not pod.is_share:
        row = np.arange(idx.shape[0], dtype=np.int64)
        gpu = np.full(idx.shape[0], -1, dtype=np.int64)
        after_gpus = take_whole_gpus(gpu_left, pod.num_gpu) if pod.num_gpu else gpu_left
    else:
        row, gpu = share_candidates(gpu_left, pod.gpu_milli)
        after_gpus = gpu_left[row]
        after_gpus[np.arange(row.shape[0]), gpu] -= pod.gpu_milli
    cpu_after = cpu[row] - pod.cpu_milli
    after = node_frag(cpu_after, after_gpus, model[row], typical)
    return Candidates(row, gpu, cpu_after, after_gpus, before[row] - after)


def fgd_scores(
    nodes: NodeArrays,
    pod: PodRequest,
    idx: IntArray,
    typical: TypicalPods,
    frag: FloatArray | None = None,
) -> NodeScores:
    """FGD scores of nodes ``idx`` (all feasible). ``frag``: F of every node by node id, or
    None to compute F_before here."""
    if idx.shape[0] == 0:
        return NodeScores(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    cand = fgd_candidates(nodes, pod, idx, typical, frag)
    best, best_gpu = best_per_row(cand.row, cand.gpu, sigmoid_score(cand.delta), idx.shape[0])
    return NodeScores(best, best_gpu)


class FgdPolicy:
    name = "fgd"
    node_local = True
    needs_frag = True

    def __init__(self, typical: TypicalPods) -> None:
        self.typical = typical

    def score(
        self, nodes: NodeArrays, pod: PodRequest, idx: IntArray, frag: FloatArray | None = None
    ) -> NodeScores:
        return fgd_scores(nodes, pod, idx, self.typical, frag)

    def normalize(self, raw: IntArray) -> IntArray:
        return raw
