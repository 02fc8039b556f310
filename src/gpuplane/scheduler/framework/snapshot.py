"""What a scheduling decision reads: the cluster at one instant, as node columns.

Like kube-scheduler's per-cycle snapshot of its cache, but columnar so plugins filter and score
every node with a few numpy operations. ``make_snapshot`` is the one way to build one: it derives
the GPU rows from the per-GPU matrix, so the counts and the devices never disagree.

GPU rows (derived):
- ``nvidia.com/gpu``: allocatable = devices the device plugin advertises (healthy); requested =
  allocatable minus the GPUs that are entirely free. A GPU holding a share is not free as a whole.
- ``gpuplane.io/gpu-milli``: allocatable = 1000 per advertised GPU; requested = allocatable minus
  the free milli left on every GPU. NodeResourcesFit's check on it is the aggregate (necessary)
  condition; GPUSharing checks that one GPU has the share free.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.api.taints import Taint
from gpuplane.scheduler.framework.images import ImageStates, make_image_states
from gpuplane.scheduler.framework.pod_index import PodLabelIndex
from gpuplane.scheduler.framework.types import (
    BASE_RESOURCES,
    GPU_MILLI,
    MILLI_PER_GPU,
    BoolArray,
    BoundPod,
    IntArray,
    NominatedPod,
    PodGroupInfo,
    WaitingPod,
)
from gpuplane.slicing.dra.snapshot import DraSnapshot
from gpuplane.topology.model import NodeTopology
from gpuplane.topology.nrt import ResourceTopology


@dataclass(frozen=True, slots=True)
class ClusterSnapshot:
    """Nodes in a fixed order; column ``i`` of every array is node ``node_names[i]``.

    ``allocatable`` and ``requested`` are ``(len(resources), num_nodes)``; ``gpu_free_milli`` is
    ``(num_nodes, max_gpus)`` with -1 where a node has no such GPU and 0 for a GPU that is owned
    whole, unhealthy or not advertised. ``bound_pods`` is read only when preemption runs.
    ``generation`` changes whenever labels, taints or cordoning change, so plugins may cache
    per-node results of static filters for one generation of the same node columns. The
    mappings may be the caller's live indexes: they are read during ``decide`` only.
    """

    node_names: tuple[str, ...]
    node_labels: tuple[Mapping[str, str], ...]
    node_taints: tuple[tuple[Taint, ...], ...]
    unschedulable: BoolArray
    resources: tuple[str, ...]
    allocatable: IntArray
    requested: IntArray
    gpu_free_milli: IntArray
    bound_pods: Mapping[str, BoundPod] = field(default_factory=dict)
    # Per node, the lowest priority among its bound pods (int64 max on an empty node), when the
    # caller keeps it; else derived from ``bound_pods`` when preemption first needs it.
    lowest_priority: IntArray | None = None
    pod_groups: Mapping[str, PodGroupInfo] = field(default_factory=dict)
    waiting: tuple[WaitingPod, ...] = ()
    nominated: tuple[NominatedPod, ...] = ()
    now_s: float = 0.0
    # kube-scheduler's nextStartNodeIndex: where the next filter pass starts (round robin).
    next_start_index: int = 0
    generation: int = 0
    # Per node name: its NodeResourceTopology (nodes that publish one) and its hardware model
    # (nodes whose GPU topology is known); topology-aware plugins read them, others never do.
    nrt: Mapping[str, ResourceTopology] = field(default_factory=dict)
    hardware: Mapping[str, NodeTopology] = field(default_factory=dict)
    # Dynamic Resource Allocation: slices, classes, claims and the pods' claim entries (None:
    # the cluster has no DRA objects; the DynamicResources plugin then lets every pod pass).
    dra: DraSnapshot | None = None
    # Namespace name -> its labels, for pod (anti-)affinity's namespaceSelector (empty: not
    # known; a non-empty namespaceSelector then selects no namespace, see docs/scheduler.md).
    namespace_labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # ``bound_pods`` grouped by labels, when the caller keeps such an index (else built from
    # ``bound_pods`` when a plugin first counts pods); it must hold exactly ``bound_pods``.
    pod_index: PodLabelIndex | None = None
    # Per node, the container images it holds (``status.images``: every name of each entry ->
    # its sizeBytes); empty when no node reports images (the twin models none). ``image_states``
    # is their cluster-wide summary (size and nodes per name), built once by ``make_snapshot``;
    # None when no node holds an image. ImageLocality reads it.
    node_images: tuple[Mapping[str, int], ...] = ()
    image_states: ImageStates | None = None

    @property
    def num_nodes(self) -> int:
        return len(self.node_names)


def gpu_rows(gpu_free_milli: IntArray, advertised: IntArray) -> tuple[IntArray, IntArray]:
    """(requested whole GPUs, requested milli) per node, derived from the device matrix."""
    whole_free = np.count_nonzero(gpu_free_milli == MILLI_PER_GPU, axis=1)
    milli_free = np.clip(gpu_free_milli, 0, None).sum(axis=1)
    return (
        (advertised - whole_free).astype(np.int64),
        (advertised * MILLI_PER_GPU - milli_free).astype(np.int64),
    )


def _resource_order(names: Sequence[str]) -> tuple[str, ...]:
    extra = sorted(set(names) - set(BASE_RESOURCES))
    return (*BASE_RESOURCES, *extra)


def make_snapshot(
    node_names: Sequence[str],
    *,
    allocatable: Mapping[str, IntArray],
    requested: Mapping[str, IntArray],
    gpu_free_milli: IntArray,
    node_labels: Sequence[Mapping[str, str]] | None = None,
    node_taints: Sequence[tuple[Taint, ...]] | None = None,
    unschedulable: BoolArray | None = None,
    bound_pods: Mapping[str, BoundPod] | None = None,
    lowest_priority: IntArray | None = None,
    pod_groups: Mapping[str, PodGroupInfo] | None = None,
    waiting: Sequence[WaitingPod] = (),
    nominated: Sequence[NominatedPod] = (),
    now_s: float = 0.0,
    next_start_index: int = 0,
    generation: int = 0,
    nrt: Mapping[str, ResourceTopology] | None = None,
    hardware: Mapping[str, NodeTopology] | None = None,
    dra: DraSnapshot | None = None,
    namespace_labels: Mapping[str, Mapping[str, str]] | None = None,
    pod_index: PodLabelIndex | None = None,
    node_images: Sequence[Mapping[str, int]] | None = None,
) -> ClusterSnapshot:
    """A snapshot from per-resource arrays; the GPU rows come from ``gpu_free_milli`` and the
    advertised count ``allocatable['nvidia.com/gpu']`` (whatever ``requested`` says of them)."""
    n = len(node_names)
    resources = _resource_order([*allocatable, *requested])
    alloc = np.zeros((len(resources), n), dtype=np.int64)
    req = np.zeros((len(resources), n), dtype=np.int64)
    for i, name in enumerate(resources):
        if name in allocatable:
            alloc[i] = allocatable[name]
        if name in requested:
            req[i] = requested[name]
    matrix = np.asarray(gpu_free_milli, dtype=np.int64)
    if matrix.ndim != 2 or matrix.shape[0] != n:
        matrix = matrix.reshape(n, -1) if matrix.size else np.zeros((n, 0), dtype=np.int64)
    g, m = resources.index(NVIDIA_GPU), resources.index(GPU_MILLI)
    alloc[m] = alloc[g] * MILLI_PER_GPU
    req[g], req[m] = gpu_rows(matrix, alloc[g])
    images = tuple(node_images) if node_images is not None else ()
    if images and len(images) != n:
        raise ValueError(f"node_images has {len(images)} entries for {n} nodes")
    return ClusterSnapshot(
        node_names=tuple(node_names),
        node_labels=tuple(node_labels) if node_labels is not None else tuple({} for _ in range(n)),
        node_taints=tuple(node_taints) if node_taints is not None else tuple(() for _ in range(n)),
        unschedulable=unschedulable if unschedulable is not None else np.zeros(n, dtype=bool),
        resources=resources,
        allocatable=alloc,
        requested=req,
        gpu_free_milli=matrix,
        bound_pods=bound_pods or {},
        lowest_priority=lowest_priority,
        pod_groups=pod_groups or {},
        waiting=tuple(waiting),
        nominated=tuple(nominated),
        now_s=now_s,
        next_start_index=next_start_index,
        generation=generation,
        nrt=nrt if nrt is not None else {},
        hardware=hardware if hardware is not None else {},
        dra=dra,
        namespace_labels=namespace_labels if namespace_labels is not None else {},
        pod_index=pod_index,
        node_images=images,
        image_states=make_image_states(images),
    )
