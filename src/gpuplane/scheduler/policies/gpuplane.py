"""gpuplane's own policy: FGD plus a penalty for GPUs stranded by CPU exhaustion.

What FGD leaves idle (fgd-openb.md §5): slivers beside share pods, and whole GPUs on nodes whose
CPU is gone. FGD's measure sees CPU only one pod ahead (a typical pod "lacks CPU" now), and
CPU-only pods usually leave F unchanged (score 50, a tie), so they land on the first node in the
priority order, however scarce that node's CPU is per GPU. Relaxing CPU alone takes FGD from
4.72 % to 4.13 % unallocated on the default trace (docs/openb.md), so CPU is where the loss is.

The policy adds to FGD's F a stranding measure: with r the trace's CPU per GPU milli over the
typical GPU pods (what FGD already knows: the demand distribution), a node with free GPU milli g
and free CPU c can feed at most c / r of its GPU milli, so

    S = max(0, g - c / r)                        (GPU milli that will lack CPU)
    score = int(100 sigmoid((F_before - F_after + w [min(0, dS) + v max(0, dS)]) / 1000)),
    dS = S_before - S_after,  w = 1 (both terms are GPU milli).

Increases of S (dS < 0) are always charged. Decreases (a CPU-light pod using the GPUs of a node
that is CPU-poor from the start, like P100 with 8 cores per GPU) are credited with weight v
only when the cluster as a whole will run out of CPU: v ramps from 0 to 1 as the expected CPU
pressure (CPU per GPU of the typical pods, incl. CPU-only ones, times the cluster's GPUs over its
CPUs) goes from 0.9 to 1.0. Without that condition the credit sends unconstrained pods to the
CPU-poor P100/V100 nodes that model-constrained pods need (gpuspec33: 13.29 % instead of
11.42 %); with CPU short everywhere (cpu250, pressure 1.06) it is what beats FGD (6.67 % vs
7.15 % without it). Everything else is FGD's: the integer truncation, the share pod's GPU
(lowest index among the GPUs with the best integer score), whole GPUs lowest index first.

Tie rule: highest score, then the fixed per-seed node priority (as FGD; ``gpus.select_position``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuplane.scheduler.policies.fgd import best_per_row, fgd_candidates, sigmoid_score
from gpuplane.scheduler.policies.types import (
    FloatArray,
    IntArray,
    NodeArrays,
    NodeScores,
    PodRequest,
    TypicalPods,
)

PRESSURE_RAMP = (0.9, 1.0)


@dataclass(frozen=True, slots=True)
class GpuplaneSettings:
    """``strand_weight`` (w): milli of F per milli of stranded GPU (0 = plain FGD);
    ``relief_weight`` (v, 0..1): share of w credited when S goes down (``relief_weight_for``)."""

    strand_weight: float = 1.0
    relief_weight: float = 0.0


def cpu_pressure(typical: TypicalPods, cluster_cpu_milli: int, cluster_gpus: int) -> float:
    """Expected CPU demand over CPU supply when GPU demand equals the cluster's GPUs: CPU milli
    per GPU milli of all typical pods (CPU-only ones included) x cluster GPU milli / CPU."""
    gpu_milli = (typical.gpu_milli * typical.num_gpu).astype(np.float64)
    demand = float((typical.prob * gpu_milli).sum())
    if demand <= 0 or cluster_cpu_milli <= 0:
        return 0.0
    cpu = float((typical.prob * typical.cpu_milli).sum())
    return cpu / demand * cluster_gpus * 1000.0 / cluster_cpu_milli


def relief_weight_for(typical: TypicalPods, cluster_cpu_milli: int, cluster_gpus: int) -> float:
    """v: 0 below CPU pressure 0.9, 1 from 1.0, linear in between."""
    low, high = PRESSURE_RAMP
    pressure = cpu_pressure(typical, cluster_cpu_milli, cluster_gpus)
    return min(1.0, max(0.0, (pressure - low) / (high - low)))


def cpu_per_gpu_milli(typical: TypicalPods) -> float | None:
    """CPU milli per GPU milli of the typical GPU pods, weighted by popularity; None if the trace
    has no GPU pods or they ask for no CPU (then nothing can strand)."""
    gpu_milli = (typical.gpu_milli * typical.num_gpu).astype(np.float64)
    is_gpu = gpu_milli > 0
    demand = float((typical.prob[is_gpu] * gpu_milli[is_gpu]).sum())
    cpu = float((typical.prob[is_gpu] * typical.cpu_milli[is_gpu]).sum())
    return cpu / demand if demand > 0 and cpu > 0 else None


def stranded(cpu_left: IntArray, gpu_left: IntArray, ratio: float) -> FloatArray:
    """S per node state: free GPU milli beyond what the free CPU can feed."""
    free: FloatArray = gpu_left.sum(axis=1).astype(np.float64)
    return np.maximum(0.0, free - cpu_left / ratio)


def gpuplane_scores(
    nodes: NodeArrays,
    pod: PodRequest,
    idx: IntArray,
    typical: TypicalPods,
    settings: GpuplaneSettings = GpuplaneSettings(),
    frag: FloatArray | None = None,
) -> NodeScores:
    """Scores of nodes ``idx`` (all feasible); ``frag`` as in ``fgd.fgd_scores``."""
    if idx.shape[0] == 0:
        return NodeScores(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    cand = fgd_candidates(nodes, pod, idx, typical, frag)
    delta = cand.delta
    ratio = cpu_per_gpu_milli(typical)
    if ratio is not None and settings.strand_weight:
        before = stranded(nodes.cpu_left[idx], nodes.gpu_left[idx], ratio)[cand.row]
        after = stranded(cand.cpu_after, cand.gpu_after, ratio)
        gained = before - after
        relief = settings.relief_weight * np.maximum(0.0, gained)
        delta = delta + settings.strand_weight * (np.minimum(0.0, gained) + relief)
    best, best_gpu = best_per_row(cand.row, cand.gpu, sigmoid_score(delta), idx.shape[0])
    return NodeScores(best, best_gpu)


class GpuplanePolicy:
    name = "gpuplane"
    node_local = True
    needs_frag = True

    def __init__(self, typical: TypicalPods, settings: GpuplaneSettings | None = None) -> None:
        self.typical = typical
        self.settings = settings or GpuplaneSettings()

    def score(
        self, nodes: NodeArrays, pod: PodRequest, idx: IntArray, frag: FloatArray | None = None
    ) -> NodeScores:
        return gpuplane_scores(nodes, pod, idx, self.typical, self.settings, frag)

    def normalize(self, raw: IntArray) -> IntArray:
        return raw
