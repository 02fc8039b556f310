"""Pod admission through the Topology Manager (topologymanager/scope*.go) with its providers.

Container scope (the default): for each init container, then each app container, collect hints
from the CPU manager (static), memory manager (static) and device manager, merge them under the
node's policy; the first container that is not admitted rejects the whole pod. Admitted
containers get their CPUs and GPUs allocated inside the merged NUMA affinity. Pod scope: one
merge over the pod's total request, the same affinity for every container.

A rejection is what the kubelet reports: reason ``TopologyAffinityError``, message
``Resources cannot be allocated with Topology locality`` (status message prefixed with
"Pod was rejected: "). Init containers' exclusive resources are handed back before the app
containers are allocated (they are "reusable" in the kubelet's words).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from gpuplane.api.resources import MEMORY, NVIDIA_GPU
from gpuplane.kubelet.cpu_manager import CpuTopology, allocate_cpus, cpu_hints, exclusive_cpus
from gpuplane.kubelet.device_manager import Device, device_hints
from gpuplane.kubelet.resource_hints import amount_hints
from gpuplane.kubelet.topology_manager.bitmask import BitMask
from gpuplane.kubelet.topology_manager.hints import ProviderHints, TopologyHint
from gpuplane.kubelet.topology_manager.numa_info import NumaInfo
from gpuplane.kubelet.topology_manager.policy import PolicyName, PolicyOptions, merge_hints
from gpuplane.topology.model import NodeTopology

REJECT_REASON = "TopologyAffinityError"
REJECT_MESSAGE = "Resources cannot be allocated with Topology locality"

# Chooses ``size`` GPU indices among ``candidates`` (already NUMA-filtered when possible).
GpuChooser = Callable[[Sequence[int], int], Sequence[int] | None]


@dataclass(frozen=True, slots=True)
class NodeState:
    numa: NumaInfo
    policy: PolicyName
    scope: str = "container"  # "container" | "pod"
    options: PolicyOptions = field(default_factory=PolicyOptions)
    cpu_topology: CpuTopology | None = None  # None: cpuManagerPolicy none
    memory_free: dict[int, int] | None = None  # bytes per NUMA node; None: memory manager none
    memory_capacity: dict[int, int] | None = None
    gpus: tuple[Device, ...] = ()  # id = str(GPU index)
    taken_cpus: frozenset[int] = frozenset()
    taken_gpus: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class ContainerRequest:
    name: str
    cpu_milli: int = 0
    memory_bytes: int = 0
    gpus: int = 0
    init: bool = False


@dataclass(frozen=True, slots=True)
class ContainerAllocation:
    affinity: tuple[int, ...] | None
    cpus: tuple[int, ...] = ()
    gpus: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class AdmitResult:
    admit: bool
    reason: str = ""
    message: str = ""
    allocations: dict[str, ContainerAllocation] = field(default_factory=dict)

    @property
    def gpus(self) -> tuple[int, ...]:
        return tuple(sorted(g for a in self.allocations.values() for g in a.gpus))


def _hints(
    node: NodeState,
    req: ContainerRequest,
    guaranteed: bool,
    taken_cpus: set[int],
    taken_gpus: set[str],
) -> list[ProviderHints]:
    providers: list[ProviderHints] = []
    if node.cpu_topology is not None:
        providers.append(
            cpu_hints(node.cpu_topology, exclusive_cpus(guaranteed, req.cpu_milli), (), taken_cpus)
        )
    if node.memory_free is not None and node.memory_capacity is not None and guaranteed:
        providers.append(
            {
                MEMORY: amount_hints(
                    list(node.numa.nodes), node.memory_free, node.memory_capacity, req.memory_bytes
                )
            }
            if req.memory_bytes
            else None
        )
    if req.gpus:
        providers.append(
            device_hints(
                list(node.numa.nodes),
                {NVIDIA_GPU: node.gpus},
                {NVIDIA_GPU: req.gpus},
                {},
                {NVIDIA_GPU: taken_gpus},
            )
        )
    return providers


def _allocate(
    node: NodeState,
    req: ContainerRequest,
    hint: TopologyHint,
    guaranteed: bool,
    taken_cpus: set[int],
    taken_gpus: set[str],
    choose: GpuChooser,
) -> ContainerAllocation | None:
    affinity: BitMask | None = hint.affinity
    cpus: tuple[int, ...] = ()
    n_cpus = exclusive_cpus(guaranteed, req.cpu_milli) if node.cpu_topology else 0
    if n_cpus and node.cpu_topology is not None:
        got = allocate_cpus(node.cpu_topology, n_cpus, taken_cpus, affinity)
        if got is None:
            return None
        cpus = got
    gpus: tuple[int, ...] = ()
    if req.gpus:
        free = [int(d.id) for d in node.gpus if d.healthy and d.id not in taken_gpus]
        aligned = (
            free
            if affinity is None
            else [int(d.id) for d in node.gpus if int(d.id) in free and d.numa in affinity.nodes()]
        )
        chosen = choose(aligned, req.gpus) if len(aligned) >= req.gpus else None
        chosen = chosen if chosen is not None else choose(free, req.gpus)
        if chosen is None:
            return None
        gpus = tuple(sorted(chosen))
    nodes = tuple(affinity.nodes()) if affinity is not None else None
    return ContainerAllocation(nodes, cpus, gpus)


def admit_pod(
    node: NodeState, containers: Sequence[ContainerRequest], *, guaranteed: bool, choose: GpuChooser
) -> AdmitResult:
    taken_cpus, taken_gpus = set(node.taken_cpus), set(node.taken_gpus)
    ordered = [c for c in containers if c.init] + [c for c in containers if not c.init]
    pod_hint: TopologyHint | None = None
    if node.scope == "pod":
        total = ContainerRequest(
            "pod",
            sum(c.cpu_milli for c in containers if not c.init),
            sum(c.memory_bytes for c in containers if not c.init),
            sum(c.gpus for c in containers if not c.init),
        )
        result = merge_hints(
            node.policy,
            node.numa,
            _hints(node, total, guaranteed, taken_cpus, taken_gpus),
            node.options,
        )
        if not result.admit:
            return AdmitResult(False, REJECT_REASON, REJECT_MESSAGE)
        pod_hint = result.hint
    allocations: dict[str, ContainerAllocation] = {}
    for req in ordered:
        hint = pod_hint
        if hint is None:
            result = merge_hints(
                node.policy,
                node.numa,
                _hints(node, req, guaranteed, taken_cpus, taken_gpus),
                node.options,
            )
            if not result.admit:
                return AdmitResult(False, REJECT_REASON, REJECT_MESSAGE)
            hint = result.hint
        alloc = _allocate(node, req, hint, guaranteed, taken_cpus, taken_gpus, choose)
        if alloc is None:
            return AdmitResult(
                False,
                "UnexpectedAdmissionError",
                "Allocate failed due to not enough free devices, which is unexpected",
            )
        allocations[req.name] = alloc
        if not req.init:  # init containers' exclusive resources are reusable afterwards
            taken_cpus.update(alloc.cpus)
            taken_gpus.update(str(g) for g in alloc.gpus)
    return AdmitResult(True, allocations=allocations)


def _siblings(cpus_by_numa: dict[int, tuple[int, ...]]) -> dict[int, int]:
    """Linux numbers the second hyper-thread of core i as i + (number of cores): when every
    NUMA node's list is two equal blocks offset by half of all CPUs, pair them up."""
    every = sorted(c for cpus in cpus_by_numa.values() for c in cpus)
    half = len(every) // 2
    if not every or every != list(range(len(every))) or len(every) % 2:
        return {}
    pairs: dict[int, int] = {}
    for cpus in cpus_by_numa.values():
        low = [c for c in cpus if c < half]
        if sorted(c + half for c in low) != sorted(c for c in cpus if c >= half):
            return {}
        for c in low:
            pairs[c], pairs[c + half] = c + half, c
    return pairs


def node_state(
    topo: NodeTopology,
    *,
    policy: PolicyName = PolicyName.SINGLE_NUMA_NODE,
    scope: str = "container",
    options: PolicyOptions | None = None,
    cpu_manager_static: bool = True,
    memory_manager_static: bool = False,
    reserved_cpus: frozenset[int] = frozenset(),
    taken_cpus: frozenset[int] = frozenset(),
    taken_gpus: frozenset[int] = frozenset(),
    unhealthy_gpus: frozenset[int] = frozenset(),
) -> NodeState:
    """The kubelet's view of a node from its hardware model (CPU NUMA nodes only)."""
    cpu_nodes = topo.cpu_numa_nodes()
    numa = NumaInfo(tuple(int(n.id) for n in cpu_nodes), _distances(topo))
    cpus_by_numa = {int(n.id): n.cpus for n in cpu_nodes}
    cpu_topo = CpuTopology(cpus_by_numa, _siblings(cpus_by_numa), reserved_cpus)
    memory = {int(n.id): n.memory_bytes or 0 for n in cpu_nodes}
    gpus = tuple(
        Device(
            str(g.index),
            None if g.numa is None else int(g.numa),
            healthy=g.index not in unhealthy_gpus,
        )
        for g in topo.gpus
    )
    return NodeState(
        numa=numa,
        policy=policy,
        scope=scope,
        options=options or PolicyOptions(),
        cpu_topology=cpu_topo if cpu_manager_static else None,
        memory_free=dict(memory) if memory_manager_static else None,
        memory_capacity=dict(memory) if memory_manager_static else None,
        gpus=gpus,
        taken_cpus=taken_cpus,
        taken_gpus=frozenset(str(g) for g in taken_gpus),
    )


def _distances(topo: NodeTopology) -> dict[int, list[int]] | None:
    if topo.numa_distances is None:
        return None
    ids = [int(n.id) for n in topo.numa_nodes]
    cpu_ids = {int(n.id) for n in topo.cpu_numa_nodes()}
    return {
        a: [topo.numa_distances[i][j] for j, b in enumerate(ids) if b in cpu_ids]
        for i, a in enumerate(ids)
        if a in cpu_ids
    }
