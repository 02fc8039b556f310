"""The arrive-only OpenB simulation (fgd-openb.md §2 step 5-6): one pod at a time, no departures.

Each pod: filter the feasible nodes, score them all, take the highest score, ties to the highest
node priority (a single feasible node is taken without comparing scores), give it the policy's
GPU(s). A pod that fits nowhere fails and is dropped. After every pod, placed or not, record the
arrived and allocated GPU milli (and optionally the cluster's fragmentation).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gpuplane.scheduler.openb.score_cache import ScoreCache, ScoreKey
from gpuplane.scheduler.openb.state import ClusterState, model_mask
from gpuplane.scheduler.openb.trace import NodeTable, PodTable
from gpuplane.scheduler.openb.workload import Workload
from gpuplane.scheduler.policies.frag import frag_of_nodes, node_frag
from gpuplane.scheduler.policies.gpus import select_position, whole_gpus
from gpuplane.scheduler.policies.types import (
    BoolArray,
    FloatArray,
    IntArray,
    PodRequest,
    Policy,
    TypicalPods,
)

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class RunResult:
    """One (trace, policy, seed) run, one entry per arriving pod.

    ``node[e]``/``gpu[e]``: where pod e went (-1: failed; ``gpu`` is the first GPU taken, -1 for
    CPU-only pods). ``frag_gpu_milli`` is None unless fragmentation was tracked.
    """

    policy: str
    seed: int
    total_gpus: int
    arrived_gpu_milli: IntArray
    used_gpu_milli: IntArray
    frag_gpu_milli: FloatArray | None
    node: IntArray
    gpu: IntArray
    wall_s: float

    @property
    def num_failed(self) -> int:
        return int((self.node < 0).sum())


@dataclass(frozen=True, slots=True)
class _Spec:
    request: PodRequest
    model_ok: BoolArray | None
    key: ScoreKey


def _specs(pods: PodTable, nodes: NodeTable) -> tuple[list[_Spec], IntArray]:
    """Distinct pod specs and the spec of each pod row."""
    index: dict[tuple[int, int, int, int, str], int] = {}
    specs: list[_Spec] = []
    of_row = np.empty(pods.num_pods, dtype=np.int64)
    for row in range(pods.num_pods):
        request = pods.request(row, nodes.model_names)
        key = (
            request.cpu_milli,
            request.mem_mib,
            request.num_gpu,
            request.gpu_milli,
            pods.gpu_spec[row],
        )
        if key not in index:
            index[key] = len(specs)
            specs.append(
                _Spec(
                    request=request,
                    model_ok=model_mask(request.models, nodes.model),
                    key=(request.cpu_milli, request.num_gpu, request.gpu_milli),
                )
            )
        of_row[row] = index[key]
    return specs, of_row


class _Run:
    """The loop's mutable parts: state, caches and the per-event records."""

    def __init__(
        self, nodes: NodeTable, policy: Policy, typical: TypicalPods | None, track_frag: bool
    ) -> None:
        self.state = ClusterState(nodes)
        self.policy = policy
        self.typical = typical
        self.cache = ScoreCache(nodes.num_nodes)
        self.frag: FloatArray | None = None
        if (policy.needs_frag or track_frag) and typical is not None:
            a = self.state.arrays
            self.frag = frag_of_nodes(a.cpu_left, a.gpu_left, a.model, typical)

    def scores(self, spec: _Spec, idx: IntArray) -> tuple[IntArray, IntArray]:
        policy, arrays = self.policy, self.state.arrays
        frag = self.frag if policy.needs_frag else None
        if not policy.node_local:
            fresh = policy.score(arrays, spec.request, idx, frag)
            return fresh.score, fresh.gpu
        return self.cache.scores(
            spec.key,
            idx,
            self.state.changed_at,
            self.state.clock,
            lambda stale: policy.score(arrays, spec.request, stale, frag),
        )

    def place(self, spec: _Spec, idx: IntArray, rank: IntArray) -> tuple[int, int]:
        """Pick the node for a pod with feasible nodes ``idx``, apply it, return (node, gpu)."""
        score, gpu_choice = self.scores(spec, idx)
        pos = 0 if idx.shape[0] == 1 else select_position(self.policy.normalize(score), idx, rank)
        node, pod = int(idx[pos]), spec.request
        arrays = self.state.arrays
        if pod.is_share:
            gpus: tuple[int, ...] = (int(gpu_choice[pos]),)
        elif pod.num_gpu:
            gpus = whole_gpus(arrays.gpu_left[node], pod.num_gpu)
        else:
            gpus = ()
        self.state.place(node, pod, gpus)
        if self.frag is not None and self.typical is not None:
            one = slice(node, node + 1)
            self.frag[node] = node_frag(
                arrays.cpu_left[one], arrays.gpu_left[one], arrays.model[one], self.typical
            )[0]
        return node, (gpus[0] if gpus else -1)


def simulate(
    nodes: NodeTable,
    pods: PodTable,
    workload: Workload,
    policy: Policy,
    *,
    typical: TypicalPods | None = None,
    track_frag: bool = False,
    progress: Progress | None = None,
) -> RunResult:
    """Run ``workload`` through ``policy``; FGD-family policies need ``typical``."""
    if policy.needs_frag and typical is None:
        raise ValueError(f"policy {policy.name!r} needs the typical pods")
    started = time.perf_counter()
    specs, spec_of_row = _specs(pods, nodes)
    run = _Run(nodes, policy, typical, track_frag)
    arrivals = workload.arrivals
    num_events = int(arrivals.shape[0])
    arrived = np.cumsum(pods.total_gpu_milli[arrivals]).astype(np.int64)
    used = np.zeros(num_events, dtype=np.int64)
    frag_log = np.zeros(num_events, dtype=np.float64) if run.frag is not None else None
    placed_node = np.full(num_events, -1, dtype=np.int64)
    placed_gpu = np.full(num_events, -1, dtype=np.int64)
    used_milli = 0
    for event in range(num_events):
        spec = specs[int(spec_of_row[arrivals[event]])]
        idx = np.flatnonzero(run.state.feasible(spec.request, spec.model_ok))
        if idx.shape[0]:
            placed_node[event], placed_gpu[event] = run.place(spec, idx, workload.node_rank)
            used_milli += spec.request.total_gpu_milli
        used[event] = used_milli
        if frag_log is not None and run.frag is not None:
            frag_log[event] = float(run.frag.sum())
        if progress is not None and (event % 500 == 0 or event == num_events - 1):
            progress(event + 1, num_events)
    return RunResult(
        policy=policy.name,
        seed=workload.seed,
        total_gpus=nodes.total_gpus,
        arrived_gpu_milli=arrived,
        used_gpu_milli=used,
        frag_gpu_milli=frag_log,
        node=placed_node,
        gpu=placed_gpu,
        wall_s=time.perf_counter() - started,
    )
