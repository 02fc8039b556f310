"""Which GPUs and CPUs the pods bound to a node hold, as far as anyone can tell.

The API names a bound pod's node and its request (``nvidia.com/gpu: 2``), never the devices: the
device plugin's choice stays inside the kubelet. gpuplane therefore keeps two things apart:

- the *assumed* holding: the kubelet's own algorithms replayed, pods in start order, on the
  node's hardware under its kubelet configuration (Topology Manager, CPU manager, the device
  plugin's preferred allocation). Pods that name their devices (a DRA allocation, the
  ``gpuplane.io/gpu-ids`` annotation) hold those. This is the state the answer computes on;
- the *uncertainty*: a node whose pods hold ``k`` GPUs without naming them could have any ``k``
  of its GPUs taken (minus those named). Answers that depend on which GPUs are free (the GPU set
  a new pod gets, its ring bandwidth, its NUMA alignment) say so, and give the range over every
  possible holding (:func:`possible_free_sets`).

The replay ignores what finished in between (a pod that started, ended and freed its GPUs
before a later one started leaves no trace in the API); that is part of the uncertainty.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from gpuplane.api.qos import QosClass
from gpuplane.api.resources import CPU, MEMORY, NVIDIA_GPU
from gpuplane.fit.model import FitNode, FitPod
from gpuplane.kubelet.admission import (
    ContainerRequest,
    GpuChooser,
    NodeState,
    admit_pod,
    node_state,
)
from gpuplane.kubelet.config import KubeletConfig
from gpuplane.kubelet.device_choice import gpu_chooser
from gpuplane.scheduler.framework.types import PodInfo
from gpuplane.topology.model import NodeTopology

# At most this many possible holdings are enumerated for a range; past it the range is sampled
# in lexicographic order and says so.
MAX_HOLDINGS = 256


@dataclass(frozen=True, slots=True)
class NodeHolding:
    """One node's assumed holding and how much of it is a guess."""

    node: str
    gpus_by_pod: dict[str, tuple[int, ...]]  # pod uid -> GPU indices (assumed or known)
    cpus_by_pod: dict[str, tuple[int, ...]]  # exclusive CPUs (static CPU manager)
    unknown_gpus: int  # GPUs held by pods that name none
    known: frozenset[int]  # GPUs named by their pods
    # Pods the replay could not admit as the kubelet did (their real holding was different).
    replay_misses: tuple[str, ...] = ()

    @property
    def taken_gpus(self) -> frozenset[int]:
        return frozenset(g for ids in self.gpus_by_pod.values() for g in ids)

    @property
    def taken_cpus(self) -> frozenset[int]:
        return frozenset(c for ids in self.cpus_by_pod.values() for c in ids)

    @property
    def uncertain(self) -> bool:
        return self.unknown_gpus > 0


def kubelet_state(
    topo: NodeTopology,
    cfg: KubeletConfig,
    taken_gpus: frozenset[int] = frozenset(),
    taken_cpus: frozenset[int] = frozenset(),
) -> NodeState:
    """The kubelet's view of a node under its configuration, with what is taken."""
    return node_state(
        topo,
        policy=cfg.topology_manager_policy,
        scope=str(cfg.topology_manager_scope),
        options=cfg.topology_manager_policy_options,
        cpu_manager_static=cfg.cpu_manager_policy == "static",
        memory_manager_static=cfg.memory_manager_policy == "Static",
        reserved_cpus=cfg.reserved_cpus,
        taken_cpus=taken_cpus,
        taken_gpus=taken_gpus,
    )


def container_requests(pod: PodInfo) -> tuple[ContainerRequest, ...]:
    return tuple(
        ContainerRequest(
            c.name,
            c.requests.get(CPU, 0),
            c.requests.get(MEMORY, 0),
            c.requests.get(NVIDIA_GPU, 0),
            c.init,
        )
        for c in pod.container_list()
    )


def _replay_one(
    pod: FitPod,
    topo: NodeTopology,
    cfg: KubeletConfig,
    choose: GpuChooser,
    taken: set[int],
    cpus: set[int],
) -> tuple[tuple[int, ...], tuple[int, ...], bool]:
    """(GPUs, exclusive CPUs, admitted as the kubelet would) for one bound pod."""
    if not cfg.manages_resources:
        free = [g.index for g in topo.gpus if g.index not in taken]
        got = choose(free, pod.gpus) if pod.gpus else ()
        return (tuple(sorted(got)) if got else (), (), got is not None)
    state = kubelet_state(topo, cfg, frozenset(taken), frozenset(cpus))
    guaranteed = pod.info.qos is QosClass.GUARANTEED
    result = admit_pod(state, container_requests(pod.info), guaranteed=guaranteed, choose=choose)
    if result.admit:
        own_cpus = tuple(sorted(c for a in result.allocations.values() for c in a.cpus))
        return result.gpus, own_cpus, True
    free = [g.index for g in topo.gpus if g.index not in taken]
    got = choose(free, pod.gpus) if pod.gpus else ()
    return (tuple(sorted(got)) if got else tuple(free[: pod.gpus])), (), False


# Replays of nodes with the same hardware, kubelet configuration and pod shapes in the same
# order come out the same: (hardware id, config, shapes) -> (GPUs, CPUs, admitted) per pod.
ReplayCache = dict[tuple[object, ...], tuple[tuple[tuple[int, ...], tuple[int, ...], bool], ...]]


def _shape(pod: FitPod, manages: bool) -> tuple[object, ...]:
    if not manages:
        return (pod.gpus, pod.gpu_ids)
    containers = tuple(
        (c.name, tuple(sorted(c.requests.items())), c.init) for c in pod.info.container_list()
    )
    return (pod.gpus, pod.gpu_ids, pod.info.qos, containers)


def replay_node(
    node: FitNode, pods: Sequence[FitPod], cache: ReplayCache | None = None
) -> NodeHolding:
    """The assumed holding of ``node`` from its bound pods (see the module docstring)."""
    holding = sorted((p for p in pods if p.holds), key=lambda p: (p.start_s, p.info.key))
    topo = node.hardware.topology
    if cache is None or topo is None:
        return _replay(node, holding)
    manages = node.kubelet.manages_resources
    key = (id(topo), node.gpus, node.kubelet, tuple(_shape(p, manages) for p in holding))
    found = cache.get(key)
    if found is None:
        result = _replay(node, holding)
        cache[key] = tuple(
            (
                result.gpus_by_pod.get(p.info.uid, ()),
                result.cpus_by_pod.get(p.info.uid, ()),
                p.info.key not in result.replay_misses,
            )
            for p in holding
        )
        return result
    gpus = {p.info.uid: g for p, (g, _, _) in zip(holding, found, strict=True) if g}
    cpus = {p.info.uid: c for p, (_, c, _) in zip(holding, found, strict=True) if c}
    misses = tuple(p.info.key for p, (_, _, ok) in zip(holding, found, strict=True) if not ok)
    known = frozenset(g for p in holding if p.gpu_ids is not None for g in p.gpu_ids)
    unknown = sum(p.gpus for p in holding if p.gpu_ids is None)
    return NodeHolding(node.name, gpus, cpus, unknown, known, misses)


def _replay(node: FitNode, holding: Sequence[FitPod]) -> NodeHolding:
    known = frozenset(g for p in holding if p.gpu_ids is not None for g in p.gpu_ids)
    gpus: dict[str, tuple[int, ...]] = {
        p.info.uid: p.gpu_ids for p in holding if p.gpu_ids is not None
    }
    cpus: dict[str, tuple[int, ...]] = {}
    unknown = sum(p.gpus for p in holding if p.gpu_ids is None)
    misses: list[str] = []
    topo = node.hardware.topology
    taken, taken_cpus = set(known), set[int]()
    if topo is None:
        index = iter(g for g in range(node.gpus) if g not in known)
        for p in holding:
            if p.gpu_ids is None and p.gpus:
                gpus[p.info.uid] = tuple(itertools.islice(index, p.gpus))
        return NodeHolding(node.name, gpus, cpus, unknown, known)
    choose = gpu_chooser(topo, node.kubelet.gpu_allocation)
    for p in holding:
        if p.gpu_ids is not None or not (p.gpus or node.kubelet.manages_resources):
            continue
        got, own, admitted = _replay_one(p, topo, node.kubelet, choose, taken, taken_cpus)
        if got:
            gpus[p.info.uid] = got
            taken.update(got)
        if own:
            cpus[p.info.uid] = own
            taken_cpus.update(own)
        if not admitted:
            misses.append(p.info.key)
    return NodeHolding(node.name, gpus, cpus, unknown, known, tuple(misses))


def possible_free_sets(
    num_gpus: int, holding: NodeHolding, extra_taken: frozenset[int] = frozenset()
) -> tuple[Iterator[frozenset[int]], int]:
    """Every free GPU set the node could really have (named GPUs taken, any ``unknown_gpus`` of
    the others), and how many there are in all (only ``MAX_HOLDINGS`` are yielded)."""
    others = [g for g in range(num_gpus) if g not in holding.known and g not in extra_taken]
    k = holding.unknown_gpus
    total = math.comb(len(others), k) if k <= len(others) else 0
    base = frozenset(range(num_gpus)) - holding.known - extra_taken

    def sets() -> Iterator[frozenset[int]]:
        for taken in itertools.islice(itertools.combinations(others, k), MAX_HOLDINGS):
            yield base - frozenset(taken)

    return sets(), total
