"""A cluster at one instant as ``fit`` reads it: nodes with what gpuplane knows of their
hardware, and pods with what the API says they hold.

The API does not say which physical GPUs a bound pod holds (the device plugin publishes no such
thing): ``FitPod.gpu_ids`` is None then, and the answer models the holding as "any k of the
node's GPUs" (:mod:`gpuplane.fit.holdings`). It is known when a DRA allocation names the
devices or the pod carries the ``gpuplane.io/gpu-ids`` annotation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpuplane.api.owner import OwnerRef
from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.api.taints import Taint
from gpuplane.fit.selecting import Selecting
from gpuplane.kubelet.config import KubeletConfig
from gpuplane.scheduler.framework.types import PodGroupInfo, PodInfo
from gpuplane.slicing.dra.claims import ResourceClaimTemplate
from gpuplane.slicing.dra.snapshot import DraSnapshot
from gpuplane.topology.gfd_hardware import InferredHardware

# Annotation a pod may carry to say which GPU indices it holds ("0,1,2,3").
GPU_IDS_ANNOTATION = "gpuplane.io/gpu-ids"


@dataclass(frozen=True, slots=True)
class FitNode:
    name: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    unschedulable: bool
    allocatable: Mapping[str, int]  # canonical units (cpu milli, memory bytes, counts)
    hardware: InferredHardware
    kubelet: KubeletConfig = field(default_factory=KubeletConfig)
    # Where the kubelet configuration came from ("default", "pool 'h100' of FILE").
    kubelet_source: str = "the kubelet's defaults (Topology Manager none)"
    # MIG: the GPU's instances by profile name per GPU index, when the node is MIG-enabled.
    mig_layout: tuple[tuple[str, ...], ...] = ()
    # The container images the node holds (status.images): every name of each entry -> its
    # sizeBytes. ImageLocality scores from them.
    images: Mapping[str, int] = field(default_factory=dict)

    @property
    def gpus(self) -> int:
        return self.allocatable.get(NVIDIA_GPU, 0)


@dataclass(frozen=True, slots=True)
class FitPod:
    """A pod of the snapshot: bound (``node`` set) or pending."""

    info: PodInfo
    node: str | None
    phase: str
    start_s: float
    labels: Mapping[str, str] = field(default_factory=dict)
    owner: OwnerRef | None = None
    gpu_ids: tuple[int, ...] | None = None  # None: which GPUs is unknown
    terminating: bool = False
    # The gpuplane.io/mig-profile annotation (the MIG controller's single-strategy demand).
    mig_profile: str | None = None

    @property
    def gpus(self) -> int:
        return self.info.requests.get(NVIDIA_GPU, 0)

    @property
    def finished(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    @property
    def holds(self) -> bool:
        """Whether the pod holds resources on a node (bound and not finished)."""
        return self.node is not None and not self.finished


@dataclass(frozen=True, slots=True)
class FitCluster:
    nodes: tuple[FitNode, ...]
    pods: tuple[FitPod, ...]
    pod_groups: Mapping[str, PodGroupInfo] = field(default_factory=dict)
    priority_classes: Mapping[str, int] = field(default_factory=dict)
    default_priority: int = 0  # the globalDefault PriorityClass's value, else 0
    dra: DraSnapshot | None = None
    claim_templates: Mapping[str, ResourceClaimTemplate] = field(default_factory=dict)
    # What selects pods (for the default spreading of the workload's pods) and namespace labels
    # (pod affinity's namespaceSelector).
    selecting: Selecting = field(default_factory=Selecting)
    namespace_labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    now_s: float = 0.0
    # What the reader could not use, each "where: what" (shown with every answer).
    notes: tuple[str, ...] = ()
