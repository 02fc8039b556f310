"""The scheduler's own values: pods as the scheduler sees them (pending, bound, waiting at
Permit, nominated) and PodGroups. Resource names, taints, tolerations, label selectors and
topology spread constraints are Kubernetes values from ``gpuplane.api``, shared with the twin.

Resource convention (gpuplane's, documented in ``docs/scheduler.md``):
- whole GPUs: ``nvidia.com/gpu: N`` (the device plugin's resource);
- a share of one GPU: ``gpuplane.io/gpu-milli: M`` with 1 <= M <= 1000 and no ``nvidia.com/gpu``,
  as OpenB's ``gpu_milli`` for single-GPU sharing pods; the node keeps free milli per GPU.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from gpuplane.api.qos import QosClass
from gpuplane.api.resources import CPU, MEMORY, NVIDIA_GPU, PODS
from gpuplane.api.selectors import LabelSelector
from gpuplane.api.taints import Toleration
from gpuplane.api.topology_spread import TopologySpreadConstraint

GPU_MILLI = "gpuplane.io/gpu-milli"
MILLI_PER_GPU = 1000
# The rows every snapshot carries first, in this order; other resources follow sorted.
BASE_RESOURCES = (CPU, MEMORY, PODS, NVIDIA_GPU, GPU_MILLI)

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPT_NEVER = "Never"


@dataclass(frozen=True, slots=True)
class GpuShare:
    """A fractional pod's place: ``milli`` thousandths of GPU ``gpu`` on its node."""

    gpu: int
    milli: int


@dataclass(frozen=True, slots=True)
class ContainerInfo:
    """One container's requests (what NUMA-aware plugins align, container by container) and
    its image as written (``spec.containers[].image``; ImageLocality looks it up on nodes)."""

    name: str
    requests: Mapping[str, int] = field(default_factory=dict)
    init: bool = False
    image: str = ""


@dataclass(frozen=True, slots=True)
class PodInfo:
    """A pending pod as the scheduler reads it (kube-scheduler's PodInfo, the fields modelled)."""

    uid: str
    namespace: str
    name: str
    requests: Mapping[str, int] = field(default_factory=dict)
    priority: int = 0
    created_s: float = 0.0
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()
    # spec.affinity as written (NodeAffinity reads nodeAffinity, InterPodAffinity podAffinity and
    # podAntiAffinity).
    affinity: Mapping[str, object] | None = None
    # The scheduling.x-k8s.io/pod-group label (a PodGroup in the pod's namespace).
    pod_group: str | None = None
    scheduler_name: str = "default-scheduler"
    preemption_policy: str = PREEMPT_LOWER_PRIORITY
    # status.nominatedNodeName, set by preemption.
    nominated_node: str | None = None
    # The PodGroup's creation time, for Coscheduling's queue order (None: no such group).
    group_created_s: float | None = None
    # The pod's QoS class (Guaranteed, Burstable, BestEffort) and its containers; a pod given
    # without containers is read as one container holding ``requests``.
    qos: QosClass = QosClass.BURSTABLE
    containers: tuple[ContainerInfo, ...] = ()
    # metadata.labels: what other pods' selectors (spreading, pod affinity) match.
    labels: Mapping[str, str] = field(default_factory=dict)
    # spec.topologySpreadConstraints as written (empty: the system default spreading applies).
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    # What kube-scheduler's DefaultSelector (plugins/helper/spread.go) builds for the pod: the AND
    # of the selectors of the Services of its namespace that select it and of its controller
    # (ReplicationController, ReplicaSet or StatefulSet). The caller computes it (the scheduler
    # has no listers); None when nothing selects the pod: then no default spreading applies.
    default_spread_selector: LabelSelector | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def group_key(self) -> str | None:
        return None if self.pod_group is None else f"{self.namespace}/{self.pod_group}"

    @property
    def gpu_milli(self) -> int:
        return self.requests.get(GPU_MILLI, 0)

    def container_list(self) -> tuple[ContainerInfo, ...]:
        """Init containers first, then app containers (the kubelet's admission order)."""
        if not self.containers:
            return (ContainerInfo("main", self.requests),)
        return (
            *(c for c in self.containers if c.init),
            *(c for c in self.containers if not c.init),
        )


@dataclass(frozen=True, slots=True)
class BoundPod:
    """A pod holding resources on a node: what preemption may evict and Coscheduling counts."""

    uid: str
    namespace: str
    name: str
    node: str
    priority: int
    requests: Mapping[str, int]
    # status.startTime (kube's GetPodStartTime); the bind time until the pod starts.
    start_s: float
    gpu_ids: tuple[int, ...] = ()
    gpu_share: GpuShare | None = None
    pod_group: str | None = None
    # metadata.labels and spec.affinity as written: what spreading counts and what existing pods'
    # (anti-)affinity rules say about newcomers.
    labels: Mapping[str, str] = field(default_factory=dict)
    affinity: Mapping[str, object] | None = None
    # metadata.deletionTimestamp is set (PodTopologySpread does not count terminating pods).
    terminating: bool = False

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def group_key(self) -> str | None:
        return None if self.pod_group is None else f"{self.namespace}/{self.pod_group}"


@dataclass(frozen=True, slots=True)
class PodGroupInfo:
    """A scheduling.x-k8s.io PodGroup and its members, as Coscheduling counts them.

    ``num_pods``: member pods that exist and are not terminal (kube-scheduler's pod informer
    skips Succeeded and Failed pods). ``assigned``: those bound to a node; pods waiting at Permit
    are added by the scheduler itself.
    """

    key: str  # namespace/name
    min_member: int
    schedule_timeout_s: float | None = None
    created_s: float = 0.0
    num_pods: int = 0
    assigned: int = 0


@dataclass(frozen=True, slots=True)
class WaitingPod:
    """A pod that passed Reserve and waits at Permit, holding its reservation on ``node``."""

    pod: PodInfo
    node: str
    deadline_s: float
    plugin: str
    gpu_ids: tuple[int, ...] = ()
    gpu_share: GpuShare | None = None
    # The wait, for the timeout message ("rejected due to timeout after waiting 1m0s ...").
    wait_s: float = 0.0


@dataclass(frozen=True, slots=True)
class NominatedPod:
    """A pod nominated to a node by preemption: lower-priority pods may not take its room."""

    pod: PodInfo
    node: str
