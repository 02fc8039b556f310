"""Per node pool, every metrics interval: GPUs allocatable, allocated, free, and FGD's
expected fragmentation (pools_timeseries.csv).

FGD (``scheduler.policies.frag``) needs the workload's distribution of pod shapes, which a
scenario does not state up front. The twin uses the pods seen so far, as FGD's scheduler
builds its typical pods from the pods it has scheduled: each pod's (CPU milli, milli-GPU per
GPU, GPU count), counted once when first seen; pods asking for MIG instances or DRA devices
have no shape FGD knows and are left out. The fragmentation is in GPUs (free milli / 1000):
between 0 and the pool's free GPUs.
"""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np

from gpuplane.api.resources import CPU, NVIDIA_GPU, is_mig_resource
from gpuplane.scheduler.policies.frag import frag_of_nodes
from gpuplane.scheduler.policies.types import TypicalPods
from gpuplane.twin.cluster.store import GPU_MILLI, MILLI_PER_GPU, ObjectStore
from gpuplane.twin.series import SeriesRow

POOL_METRICS = ("gpus_allocatable", "gpus_allocated", "gpus_free", "fgd_fragmentation_gpus")


class PoolSampler:
    """Keeps the shapes of the pods seen so far; ``rows`` reads the store, changes nothing."""

    __slots__ = ("_seen", "_shapes")

    def __init__(self) -> None:
        self._seen = 0
        self._shapes: Counter[tuple[int, int, int]] = Counter()

    def _count_new_pods(self, store: ObjectStore) -> None:
        # store.pods only grows, in creation order: read each pod once.
        for pod in itertools.islice(store.pods.values(), self._seen, None):
            self._seen += 1
            r = pod.requests
            if any(is_mig_resource(k) for k in r) or pod.template.resource_claims:
                continue
            whole, milli = r.get(NVIDIA_GPU, 0), r.get(GPU_MILLI, 0)
            per_gpu, count = (MILLI_PER_GPU, whole) if whole else ((milli, 1) if milli else (0, 0))
            self._shapes[(r.get(CPU, 0), per_gpu, count)] += 1

    def typical(self) -> TypicalPods:
        specs = sorted(self._shapes)
        total = sum(self._shapes.values()) or 1
        return TypicalPods(
            cpu_milli=np.array([s[0] for s in specs], dtype=np.int64),
            gpu_milli=np.array([s[1] for s in specs], dtype=np.int64),
            num_gpu=np.array([s[2] for s in specs], dtype=np.int64),
            access=np.ones((len(specs), 1), dtype=bool),
            prob=np.array([self._shapes[s] / total for s in specs], dtype=np.float64),
            gpu_spec=tuple("" for _ in specs),
        )

    def rows(self, store: ObjectStore, t_s: float) -> list[SeriesRow]:
        self._count_new_pods(store)
        typical = self.typical()
        members: dict[str, list[int]] = {}
        for i, name in enumerate(store.node_order):
            members.setdefault(store.nodes[name].pool, []).append(i)
        gpu_left = np.clip(store.gpu_free_milli, 0, None).astype(np.int64)
        cpu_left = np.clip(store.free[CPU], 0, None).astype(np.int64)
        out: list[SeriesRow] = []
        for pool in sorted(members):
            idx = np.asarray(members[pool], dtype=np.int64)
            allocatable = int(store.alloc_gpu[idx].sum())
            allocated = allocatable - int(store.free[NVIDIA_GPU][idx].sum())
            free = float(gpu_left[idx].sum()) / MILLI_PER_GPU
            frag = 0.0
            if typical.num_specs:
                model = np.zeros(len(idx), dtype=np.int64)
                milli = frag_of_nodes(cpu_left[idx], gpu_left[idx], model, typical).sum()
                frag = min(float(milli) / MILLI_PER_GPU, free)  # float sums can overshoot by ulps
            values = (float(allocatable), float(allocated), free, round(frag, 6))
            out += [
                SeriesRow(round(t_s, 6), pool, m, v)
                for m, v in zip(POOL_METRICS, values, strict=True)
            ]
        return out
