"""FGD's expected GPU fragmentation of a node, vectorised over node states (fgd-openb.md §4).

For a typical pod m and node state n, the fragment F_n(m) is all the node's free GPU milli if m
is CPU-only or cannot run on n (lacks CPU, GPUs or model access), else the free milli of the
GPUs too small for m. F_n = sum_m p_m F_n(m).

Floating-point order matters: FGD's score truncates ``100 sigmoid(dF / 1000)``, and CPU-only
pods usually leave F unchanged, which must come out as dF == 0.0 exactly (score 50) so that
such nodes tie. We reproduce the simulator's order exactly (pkg/utils/frag.go): each fragment
class has a bucket that accumulates ``p_m * amount`` in typical-pod order; the Q3 ("fits")
class puts its too-small GPUs in the Q2 bucket; F is the buckets except Q3 summed in class
order. Adding 0.0 is exact, so a bucket's running sum over *all* m with zeros for the other
classes equals the sum over its own m; ``np.cumsum`` is a sequential fold, which gives the
same floats as the simulator's loop, row by row, independently of how many rows there are.
"""

from __future__ import annotations

import numpy as np

from gpuplane.scheduler.policies.types import FloatArray, IntArray, TypicalPods

# The simulator's fragment classes, in its bucket order (FragRatioDataMap).
Q1_LACK_BOTH, Q2_LACK_GPU, Q3_SATISFIED, Q4_LACK_CPU, XL_SATISFIED, XR_LACK_CPU, NO_ACCESS = range(
    7
)
_SUMMED = (Q1_LACK_BOTH, Q2_LACK_GPU, Q4_LACK_CPU, XL_SATISFIED, XR_LACK_CPU, NO_ACCESS)


def node_frag(
    cpu_left: IntArray, gpu_left: IntArray, model: IntArray, typical: TypicalPods
) -> FloatArray:
    """F of K node states: ``cpu_left[K]``, ``gpu_left[K, G]``, ``model[K]`` -> ``F[K]``."""
    num_states = cpu_left.shape[0]
    if num_states == 0:
        return np.zeros(0, dtype=np.float64)
    bucket, amount = _classes(cpu_left, gpu_left, model, typical)
    term = typical.prob[None, :] * amount
    stacked = np.zeros((len(_SUMMED), num_states, typical.num_specs), dtype=np.float64)
    for b, cls in enumerate(_SUMMED):
        np.copyto(stacked[b], term, where=bucket == cls)
    sums = np.cumsum(stacked, axis=2)[:, :, -1]
    frag: FloatArray = sums[0].copy()
    for b in range(1, len(_SUMMED)):
        frag += sums[b]
    return frag


def _classes(
    cpu_left: IntArray, gpu_left: IntArray, model: IntArray, typical: TypicalPods
) -> tuple[IntArray, IntArray]:
    """Bucket of each (state, typical pod) pair and the milli it adds (before weighting)."""
    milli = typical.gpu_milli
    total = gpu_left.sum(axis=1)
    fits = gpu_left[:, :, None] >= milli[None, None, :]  # [K, G, M]
    gpu_ok = fits.sum(axis=1) >= typical.num_gpu[None, :]
    too_small = np.where(fits, 0, gpu_left[:, :, None]).sum(axis=1)  # [K, M]
    cpu_ok = cpu_left[:, None] >= typical.cpu_milli[None, :]
    access = typical.access[:, model].T
    cpu_only = (milli == 0)[None, :]
    # GetNodePodFrag: CPU-only pods first, then model access, then GPU and CPU fit.
    gpu_class = np.where(
        gpu_ok,
        np.where(cpu_ok, Q2_LACK_GPU, Q4_LACK_CPU),
        np.where(cpu_ok, Q2_LACK_GPU, Q1_LACK_BOTH),
    )
    bucket = np.where(
        cpu_only,
        np.where(cpu_ok, XL_SATISFIED, XR_LACK_CPU),
        np.where(access, gpu_class, NO_ACCESS),
    )
    satisfied = ~cpu_only & access & gpu_ok & cpu_ok
    amount = np.where(satisfied, too_small, total[:, None])
    return bucket.astype(np.int64), amount.astype(np.int64)


def frag_of_nodes(
    cpu_left: IntArray, gpu_left: IntArray, model: IntArray, typical: TypicalPods, chunk: int = 512
) -> FloatArray:
    """``node_frag`` in chunks, for whole clusters (bounds the [K, G, M] temporaries)."""
    parts = [
        node_frag(cpu_left[i : i + chunk], gpu_left[i : i + chunk], model[i : i + chunk], typical)
        for i in range(0, cpu_left.shape[0], chunk)
    ]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float64)
