"""The twin's object records (mutable: the store owns them) and the pod phase state machine.

Pod phases follow Kubernetes: Pending -> Running -> Succeeded | Failed, and Pending -> Failed when
the kubelet rejects the pod at admission (e.g. TopologyAffinityError, OutOfnvidia.com/gpu). A
deleted pod is not a phase: it keeps its last phase and gets ``deleted_s`` (the object is gone
from the API; the twin keeps the record so every pod ever created is accounted for).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuplane.api.owner import OwnerRef
from gpuplane.api.pod_phase import TERMINAL_PHASES, PodPhase
from gpuplane.api.qos import QosClass
from gpuplane.api.selectors import LabelSelector
from gpuplane.api.taints import Taint
from gpuplane.fit.workload_objects import PodTemplate, Resources
from gpuplane.kubelet.config import KubeletConfig
from gpuplane.slicing.devices import DeviceKind, DeviceSlot
from gpuplane.slicing.mig.layout import Layout
from gpuplane.slicing.sharing.config import DevicePluginConfig
from gpuplane.topology.model import NodeTopology

VALID_POD_TRANSITIONS: dict[PodPhase, frozenset[PodPhase]] = {
    # Pending -> Running: the kubelet admitted the pod and started its containers.
    # Pending -> Failed: kubelet admission rejected it (TopologyAffinityError, OutOf<resource>),
    #   or the node it was bound to was lost before it started.
    PodPhase.PENDING: frozenset({PodPhase.RUNNING, PodPhase.FAILED}),
    # Running -> Succeeded: every container exited 0 and restartPolicy does not restart it.
    # Running -> Failed: a container failed and restartPolicy is Never, or the pod was killed
    #   (active deadline, GPU failure).
    PodPhase.RUNNING: frozenset({PodPhase.SUCCEEDED, PodPhase.FAILED}),
    # Terminal phases never change (kubelet: a pod in a terminal phase stays there).
    PodPhase.SUCCEEDED: frozenset(),
    PodPhase.FAILED: frozenset(),
    # The twin never sets Unknown (a lost node fails its pods): nothing enters or leaves it.
    PodPhase.UNKNOWN: frozenset(),
}


class IllegalTransition(ValueError):
    pass


@dataclass(slots=True)
class Pod:
    uid: str
    name: str
    namespace: str
    template: PodTemplate
    requests: Resources
    qos: QosClass
    created_s: float
    owner: OwnerRef | None = None
    pod_group: str | None = None
    workload: str = ""
    phase: PodPhase = PodPhase.PENDING
    reason: str | None = None
    message: str | None = None
    node_name: str | None = None
    gpu_ids: tuple[int, ...] = ()
    # Devices of other device resources: resource name -> device indices on the node.
    ext_device_ids: dict[str, tuple[int, ...]] = field(default_factory=dict)
    # Devices of the pod's DRA claims (driver device names), recorded at binding.
    dra_devices: tuple[str, ...] = ()
    # Physical GPUs the pod's devices amount to (set at binding; GPU-hours use it).
    gpu_fraction: float = 0.0
    scheduled_s: float | None = None
    started_s: float | None = None
    finished_s: float | None = None
    deleted_s: float | None = None
    restart_count: int = 0
    run_s: float | None = None  # how long the main container runs; None: until the run ends
    will_fail: bool = False
    schedule_attempts: int = 0
    backoff_until_s: float = 0.0
    last_schedule_message: str | None = None
    # status.nominatedNodeName: preemption made room for the pod on this node.
    nominated_node_name: str | None = None
    conditions: dict[str, bool] = field(default_factory=dict)
    # The PodScheduled condition's reason while it is False: Unschedulable, or SchedulerError
    # when the last attempt failed with an error.
    scheduled_reason: str | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def is_deleted(self) -> bool:
        return self.deleted_s is not None

    @property
    def is_active(self) -> bool:
        """Counts toward a controller's replicas: not terminal and not deleted."""
        return self.deleted_s is None and self.phase not in TERMINAL_PHASES

    @property
    def holds_resources(self) -> bool:
        """Bound and not finished: its requests are charged to its node."""
        return self.node_name is not None and self.is_active

    def set_phase(
        self, phase: PodPhase, reason: str | None = None, message: str | None = None
    ) -> None:
        if phase is not self.phase and phase not in VALID_POD_TRANSITIONS[self.phase]:
            raise IllegalTransition(f"pod {self.key}: {self.phase} -> {phase} is not allowed")
        self.phase = phase
        self.reason = reason
        self.message = message


@dataclass(slots=True)
class Node:
    name: str
    pool: str
    topology: NodeTopology
    labels: dict[str, str]
    taints: list[Taint]
    capacity: Resources
    allocatable: Resources
    requested: Resources = field(default_factory=dict)
    unschedulable: bool = False
    ready: bool = True
    lost: bool = False
    gpu_state: str = "ready"
    gpus_advertised: bool = True
    gpu_healthy: list[bool] = field(default_factory=list)  # per physical GPU
    # The ``nvidia.com/gpu`` devices the device plugin advertises (whole GPUs, time-slicing/MPS
    # replicas, or MIG instances under the single strategy) and their owners, per device.
    device_slots: list[DeviceSlot] = field(default_factory=list)
    gpu_owner: list[str | None] = field(default_factory=list)  # pod uid per device index
    # Devices advertised under other names (nvidia.com/gpu.shared, nvidia.com/mig-<profile>).
    ext_slots: dict[str, list[DeviceSlot]] = field(default_factory=dict)
    ext_owner: dict[str, list[str | None]] = field(default_factory=dict)
    # The device plugin's sharing config (None: whole GPUs, no sharing).
    sharing: DevicePluginConfig | None = None
    # MIG: each GPU's layout (None: MIG disabled) and the device plugin's MIG strategy.
    mig_layouts: list[Layout] | None = None
    mig_strategy: str = ""
    # NVIDIA's DRA driver publishes the GPUs as ResourceSlices (no device plugin).
    dra: bool = False
    pods: set[str] = field(default_factory=set)
    driver_version: str | None = None
    upgrade_state: str = ""
    upgrade_state_since_s: float = 0.0
    # The node's KubeletConfiguration (Topology Manager, CPU manager, device choice).
    kubelet: KubeletConfig = field(default_factory=KubeletConfig)
    # Exclusive CPUs the static CPU manager gave each admitted pod (pod uid -> CPU ids).
    exclusive_cpus: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def num_gpus(self) -> int:
        """Physical GPUs."""
        return self.topology.num_gpus

    @property
    def num_devices(self) -> int:
        """``nvidia.com/gpu`` devices (physical GPUs unless shared or MIG)."""
        return len(self.gpu_owner)

    @property
    def devices_are_gpus(self) -> bool:
        """Whether device ``i`` is physical GPU ``i`` (topology-aware code needs this)."""
        return len(self.device_slots) == self.num_gpus and all(
            s.kind is DeviceKind.GPU and s.gpu == i for i, s in enumerate(self.device_slots)
        )

    def device_healthy(self, i: int) -> bool:
        return self.gpu_healthy[self.device_slots[i].gpu]

    def free_gpu_ids(self) -> list[int]:
        return [
            i
            for i in range(self.num_devices)
            if self.gpu_owner[i] is None and self.device_healthy(i) and self.gpus_advertised
        ]


@dataclass(slots=True)
class ReplicaSetState:
    name: str
    namespace: str
    template: PodTemplate
    replicas: int
    workload: str
    owner: OwnerRef | None = None
    pod_hash: str = ""
    # spec.selector: the Deployment's plus its pod-template-hash, or the ReplicaSet's own.
    selector: LabelSelector | None = None
    pods: list[str] = field(default_factory=list)  # uids, creation order
    replacements: int = 0
    scaled_down: set[str] = field(default_factory=set)  # pods this controller deleted


@dataclass(slots=True)
class DeploymentState:
    name: str
    namespace: str
    replicas: int
    replica_set: str
    workload: str


@dataclass(slots=True)
class JobState:
    name: str
    namespace: str
    template: PodTemplate
    completions: int | None
    parallelism: int
    backoff_limit: int
    active_deadline_s: float | None
    workload: str
    created_s: float
    run_s_override: float | None = None
    pods: list[str] = field(default_factory=list)
    succeeded: int = 0
    failed: int = 0
    condition: str | None = None  # "Complete" | "Failed"
    finished_s: float | None = None
    next_create_s: float = 0.0
    replacements: int = 0  # pods created in place of failed ones


@dataclass(slots=True)
class PodGroupState:
    name: str
    namespace: str
    min_member: int
    schedule_timeout_s: float | None
    phase: str = "Pending"  # scheduler-plugins PodGroupPhase
    created_s: float = 0.0
    scheduled_s: float | None = None
