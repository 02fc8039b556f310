"""A plain reference of the arrive-only simulation: loops over nodes for the filter, every
feasible node scored by ``policies.reference`` on every pod (no cache, no kept F), selection by a
loop. Slow; tests compare it with ``simulator.simulate`` on a few hundred pods."""

from __future__ import annotations

import numpy as np

from gpuplane.scheduler.openb.state import ClusterState
from gpuplane.scheduler.openb.trace import NodeTable, PodTable, spec_allows
from gpuplane.scheduler.openb.workload import Workload
from gpuplane.scheduler.policies.gpuplane import GpuplaneSettings
from gpuplane.scheduler.policies.reference import (
    minmax_reference,
    reference_scores,
    select_reference,
)
from gpuplane.scheduler.policies.types import MILLI_PER_GPU, PodRequest, TypicalPods


def _fits(state: ClusterState, nodes: NodeTable, n: int, pod: PodRequest, spec: str) -> bool:
    a = state.arrays
    if a.cpu_left[n] < pod.cpu_milli or a.mem_left[n] < pod.mem_mib:
        return False
    if pod.num_gpu == 0:
        return True
    if not spec_allows(spec, nodes.model_names[int(a.model[n])]):
        return False
    return sum(1 for g in a.gpu_left[n] if g >= pod.gpu_milli) >= pod.num_gpu


def simulate_reference(
    nodes: NodeTable,
    pods: PodTable,
    workload: Workload,
    policy: str,
    typical: TypicalPods | None,
    max_events: int,
    settings: GpuplaneSettings | None = None,
) -> list[tuple[int, int]]:
    """(node, first GPU) of the first ``max_events`` arrivals; (-1, -1) for a failed pod."""
    state = ClusterState(nodes)
    rank = [int(r) for r in workload.node_rank]
    placed: list[tuple[int, int]] = []
    for row in (int(r) for r in workload.arrivals[:max_events]):
        pod = pods.request(row, nodes.model_names)
        spec = pods.gpu_spec[row]
        ok = [n for n in range(nodes.num_nodes) if _fits(state, nodes, n, pod, spec)]
        if not ok:
            placed.append((-1, -1))
            continue
        idx = np.array(ok, dtype=np.int64)
        scored = reference_scores(policy, state.arrays, pod, idx, typical, settings)
        raw = [int(s) for s in scored.score]
        final = minmax_reference(raw) if policy == "bestfit" else raw
        node = ok[0] if len(ok) == 1 else select_reference(final, ok, rank)
        if pod.is_share:
            gpus: tuple[int, ...] = (int(scored.gpu[ok.index(node)]),)
        else:
            row_gpus = [int(g) for g in state.arrays.gpu_left[node]]
            gpus = tuple(g for g, f in enumerate(row_gpus) if f == MILLI_PER_GPU)[: pod.num_gpu]
        state.place(node, pod, gpus)
        placed.append((node, gpus[0] if gpus else -1))
    return placed
