"""The values every placement policy reads and returns: node-state arrays, one pod, scores.

Units follow the OpenB trace (fgd-openb.md §1): CPU in milli-cores, memory in MiB, GPU in
milli-GPU (1000 = one whole GPU). A node has up to ``G`` GPU slots; slots past the node's GPU
count are padded with 0 free milli, which no formula in fgd-openb.md §3-4 can tell from a GPU
that is fully used, so padding needs no special case.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

MILLI_PER_GPU = 1000
MAX_SCORE = 100
# Normalisers of DotProd and BestFit (fgd-openb.md §3: MaxSpecCpu, MaxSpecGpu).
MAX_SPEC_CPU_MILLI = 128_000
MAX_SPEC_GPU_MILLI = 8_000
# GpuClustering's pod tags: 0 = GPU-sharing pod, k = pod of k whole GPUs (k = 1..8).
SHARE_TAG = 0
NUM_TAGS = 9


@dataclass(frozen=True, slots=True)
class PodRequest:
    """One pod's request. ``models``: allowed GPU model ids (None = any model).

    An empty ``models`` set means the pod names only models absent from the cluster, so no
    node can host it (the simulator's `IsNodeAccessibleToPodByType`).
    """

    cpu_milli: int
    mem_mib: int
    num_gpu: int
    gpu_milli: int
    models: frozenset[int] | None = None

    @property
    def is_share(self) -> bool:
        """A GPU-sharing pod: one GPU, less than all of it."""
        return self.num_gpu == 1 and self.gpu_milli < MILLI_PER_GPU

    @property
    def total_gpu_milli(self) -> int:
        return self.num_gpu * self.gpu_milli

    @property
    def tag(self) -> int:
        """GpuClustering's tag (only meaningful for GPU pods)."""
        return SHARE_TAG if self.is_share else self.num_gpu


@dataclass(frozen=True, slots=True)
class NodeArrays:
    """Per-node state, one row per node (N nodes, G GPU slots).

    The arrays are owned by the caller, who may update them in place between decisions; a
    policy only reads them. ``model`` holds ids into the caller's model-name list;
    ``tag_counts[n, t]`` counts GPU pods of tag ``t`` on node ``n`` (GpuClustering only).
    """

    cpu_left: IntArray  # [N] milli-CPU free
    mem_left: IntArray  # [N] MiB free
    gpu_left: IntArray  # [N, G] milli-GPU free per GPU slot (0 past the node's GPU count)
    num_gpus: IntArray  # [N] GPUs the node has
    model: IntArray  # [N] GPU model id
    tag_counts: IntArray  # [N, NUM_TAGS]

    @property
    def num_nodes(self) -> int:
        return int(self.cpu_left.shape[0])


@dataclass(frozen=True, slots=True)
class NodeScores:
    """Scores of the nodes ``idx`` a policy was asked about (same order).

    ``gpu`` is the GPU a share pod would take on that node (-1 for other pods: they take the
    lowest-index fully free GPUs, fgd-openb.md §3).
    """

    score: IntArray
    gpu: IntArray


@dataclass(frozen=True, slots=True)
class TypicalPods:
    """The trace's demand distribution as FGD sees it (fgd-openb.md §4), M specs.

    ``access[m, model_id]``: may spec m use that GPU model. ``prob`` sums to 1.
    """

    cpu_milli: IntArray  # [M]
    gpu_milli: IntArray  # [M] per GPU; 0 = CPU-only spec
    num_gpu: IntArray  # [M]
    access: BoolArray  # [M, num_models]
    prob: FloatArray  # [M]
    gpu_spec: tuple[str, ...]  # the literal model lists, for display

    @property
    def num_specs(self) -> int:
        return int(self.prob.shape[0])


class Policy(Protocol):
    """A node-scoring policy for one pod at a time.

    ``score`` scores the nodes ``idx`` (all feasible for ``pod``); ``normalize`` turns the
    scores of all feasible nodes of one decision into final scores (identity except BestFit).
    The caller picks the highest final score, ties to the highest node priority
    (``select.select_node``). ``node_local``: a node's score depends only on that node's state
    and the pod, so a caller may cache it until the node changes. ``needs_frag``: ``score``
    wants each node's current fragmentation F (``frag.node_frag``) in ``frag``; a caller that
    keeps F per node passes it, anyone else passes None and the policy computes it.
    """

    name: str
    node_local: bool
    needs_frag: bool

    def score(
        self, nodes: NodeArrays, pod: PodRequest, idx: IntArray, frag: FloatArray | None = None
    ) -> NodeScores: ...

    def normalize(self, raw: IntArray) -> IntArray: ...
