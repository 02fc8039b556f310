"""A pod on its node, at the GPU level: the kubelet's admission under the node's policy, the GPU
set it gets, what gpuplane's and NVIDIA's choices would be, and their ring bandwidth.

All on the assumed free GPUs (:mod:`gpuplane.fit.holdings`); when the node's bound pods do
not name their GPUs, the bottleneck of gpuplane's choice is also given as a range over every
holding the node could really have.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from gpuplane.api.qos import QosClass
from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.fit.holdings import (
    NodeHolding,
    container_requests,
    kubelet_state,
    possible_free_sets,
)
from gpuplane.fit.model import FitNode
from gpuplane.fit.result import GpuAnswer, GpuSet, KubeletVerdict
from gpuplane.kubelet.admission import AdmitResult, admit_pod
from gpuplane.kubelet.config import GpuAllocation, KubeletConfig
from gpuplane.kubelet.device_choice import gpu_chooser
from gpuplane.kubelet.gpu_sets import pick_gpus
from gpuplane.scheduler.framework.types import PodInfo
from gpuplane.topology.collective import best_ring, ring_allreduce_cost
from gpuplane.topology.model import NodeTopology

DEFAULT_MESSAGE_BYTES = 256 * 2**20


def policy_text(cfg: KubeletConfig) -> str:
    return f"{cfg.topology_manager_policy}/{cfg.topology_manager_scope}"


def gpu_set(topo: NodeTopology, gpus: Sequence[int], message_bytes: int) -> GpuSet:
    ids = tuple(sorted(gpus))
    numa = tuple(sorted({int(n) for g in ids if (n := topo.gpus[g].numa) is not None}))
    if len(ids) < 2:
        return GpuSet(ids, numa, ids, 0.0, 0.0)
    ring = best_ring(topo, ids)
    cost = ring_allreduce_cost(ring, message_bytes)
    return GpuSet(ids, numa, ring.order, ring.bottleneck_gbps, cost.time_s * 1000)


def numa_split(topo: NodeTopology, free: Sequence[int]) -> dict[int, int]:
    """Free GPUs per NUMA node (GPUs without one under -1)."""
    return dict(
        sorted(Counter(-1 if (n := topo.gpus[g].numa) is None else int(n) for g in free).items())
    )


def _rejection_detail(
    topo: NodeTopology, free: Sequence[int], need: int, cfg: KubeletConfig
) -> str:
    split = numa_split(topo, free)
    parts = ", ".join(f"{n} on NUMA {k}" for k, n in split.items())
    if need and len(free) >= need and max(split.values(), default=0) < need:
        return (
            f"{len(free)} free GPUs ({parts}), but no NUMA node has {need}: "
            f"{cfg.topology_manager_policy} rejects a request it cannot align"
        )
    return (
        f"{len(free)} free GPUs ({parts}); the CPU/memory/GPU hints cannot be merged into one "
        f"NUMA affinity {cfg.topology_manager_policy} accepts"
    )


def _verdict(
    node: FitNode, topo: NodeTopology, result: AdmitResult, free: Sequence[int], need: int
) -> KubeletVerdict:
    cfg = node.kubelet
    if result.admit:
        aff = {n for a in result.allocations.values() if a.affinity for n in a.affinity}
        return KubeletVerdict(True, policy_text(cfg), numa_affinity=tuple(sorted(aff)) or None)
    return KubeletVerdict(
        False,
        policy_text(cfg),
        result.reason,
        f"Pod was rejected: {result.message}",
        explanation=_rejection_detail(topo, free, need, cfg),
    )


def _range(
    topo: NodeTopology, holding: NodeHolding, extra: frozenset[int], need: int
) -> tuple[int, tuple[float, float] | None]:
    if not holding.uncertain or need < 2:
        return 1, None
    sets, total = possible_free_sets(len(topo.gpus), holding, extra)
    values = []
    for free in sets:
        pick = pick_gpus(topo, sorted(free), need)
        if pick is not None:
            values.append(pick.bottleneck_gbps)
    return total, ((min(values), max(values)) if values else None)


def place_on_node(
    node: FitNode,
    holding: NodeHolding,
    pod: PodInfo,
    extra_gpus: frozenset[int],
    extra_cpus: frozenset[int],
    message_bytes: int = DEFAULT_MESSAGE_BYTES,
    *,
    bottleneck_range: bool = True,
) -> tuple[GpuAnswer | None, KubeletVerdict, AdmitResult | None]:
    """The pod admitted on ``node`` with ``extra_*`` already taken by pods placed before it in
    this answer: (GPU answer, kubelet verdict, the admission result when computed).

    ``bottleneck_range=False`` skips the range over every possible holding (up to
    ``MAX_HOLDINGS`` set searches), which the scheduler extender cannot afford per call."""
    topo = node.hardware.topology
    cfg = node.kubelet
    need = pod.requests.get(NVIDIA_GPU, 0)
    if topo is None:
        known = not cfg.may_reject
        text = "" if known else f"no hardware model: {node.hardware.source}"
        return None, KubeletVerdict(True, policy_text(cfg), explanation=text, known=known), None
    taken = holding.taken_gpus | extra_gpus
    free = [g.index for g in topo.gpus if g.index not in taken and g.index < node.gpus]
    state = kubelet_state(topo, cfg, frozenset(taken), holding.taken_cpus | extra_cpus)
    guaranteed = pod.qos is QosClass.GUARANTEED
    chooser = gpu_chooser(topo, cfg.gpu_allocation)
    result = admit_pod(state, container_requests(pod), guaranteed=guaranteed, choose=chooser)
    verdict = _verdict(node, topo, result, free, need)
    if not need:
        return None, verdict, result
    ours = pick_gpus(topo, free, need)
    theirs = gpu_chooser(topo, GpuAllocation.BEST_EFFORT)(free, need)
    possible, bottleneck = (
        _range(topo, holding, extra_gpus, need) if bottleneck_range else (1, None)
    )
    answer = GpuAnswer(
        kubelet=gpu_set(topo, result.gpus, message_bytes) if result.admit else None,
        gpuplane=gpu_set(topo, ours.gpus, message_bytes) if ours is not None else None,
        nvidia=gpu_set(topo, theirs, message_bytes) if theirs else None,
        free_assumed=tuple(free),
        uncertain=holding.uncertain,
        holdings_possible=possible,
        bottleneck_range_gbps=bottleneck,
    )
    return answer, verdict, result
