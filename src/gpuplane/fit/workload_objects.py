"""The workload objects users write as Kubernetes manifests, as plain frozen values: Pods, Jobs,
Deployments, ReplicaSets and scheduler-plugins' PodGroups, each with the pod template its
controller stamps out. ``gpuplane.k8s.manifests.parse`` fills them in; the twin runs them
(``twin.scenario.spec.Workload`` adds arrivals and run times) and ``gpuplane fit`` expands them
into pods (``fit.expand``).

They sit in ``fit``, the lowest layer above every decision package, because a pod template
carries values of two of them: its DRA claim entries (``slicing``) and the inference server a
container runs (``serving``).

Resource quantities are canonical integers: ``cpu`` in millicores, ``memory`` and
``ephemeral-storage`` in bytes, every other resource (``nvidia.com/gpu``,
``nvidia.com/mig-1g.10gb``, ``pods``) as a count.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from gpuplane.api.selectors import LabelSelector
from gpuplane.api.taints import Toleration
from gpuplane.api.topology_spread import TopologySpreadConstraint
from gpuplane.serving.inference_server import InferenceServerSpec
from gpuplane.slicing.dra.pod_claims import PodResourceClaim

# The label naming a pod's PodGroup (scheduler-plugins coscheduling, scheduling.x-k8s.io).
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"

Resources = dict[str, int]


class RestartPolicy(StrEnum):
    ALWAYS = "Always"
    ON_FAILURE = "OnFailure"
    NEVER = "Never"


@dataclass(frozen=True, slots=True)
class ContainerSpec:
    name: str
    requests: Resources = field(default_factory=dict)
    limits: Resources = field(default_factory=dict)
    # spec.containers[].image as written ("" when not given).
    image: str = ""


@dataclass(frozen=True, slots=True)
class PodTemplate:
    """A pod as its controller stamps it out (metadata + the spec fields the twin models)."""

    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    containers: tuple[ContainerSpec, ...] = ()
    init_containers: tuple[ContainerSpec, ...] = ()
    priority: int = 0
    priority_class_name: str | None = None
    scheduler_name: str = "default-scheduler"
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()
    # spec.affinity kept as written; scheduler plugins interpret it.
    affinity: dict[str, object] | None = None
    # spec.topologySpreadConstraints, validated.
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    restart_policy: RestartPolicy = RestartPolicy.ALWAYS
    termination_grace_period_s: float = 30.0
    overhead: Resources = field(default_factory=dict)
    # Peak GPU memory of the pod's processes (annotation gpuplane.io/gpu-memory); 0: unknown.
    gpu_memory_bytes: int = 0
    # spec.resourceClaims (DRA).
    resource_claims: tuple[PodResourceClaim, ...] = ()
    # The vLLM/SGLang server one of the containers runs (None: not an inference server).
    inference: InferenceServerSpec | None = None


@dataclass(frozen=True, slots=True)
class PodSpecObject:
    """A bare Pod manifest."""

    name: str
    namespace: str
    template: PodTemplate


@dataclass(frozen=True, slots=True)
class JobSpec:
    name: str
    namespace: str
    template: PodTemplate
    completions: int | None = 1  # None: work-queue job (spec.completions unset with parallelism)
    parallelism: int = 1
    backoff_limit: int = 6
    active_deadline_s: float | None = None
    completion_mode: Literal["NonIndexed", "Indexed"] = "NonIndexed"
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DeploymentSpec:
    name: str
    namespace: str
    template: PodTemplate
    replicas: int = 1
    labels: dict[str, str] = field(default_factory=dict)
    # spec.selector (None: select by the template's labels).
    selector: LabelSelector | None = None
    # strategy.rollingUpdate, as absolute numbers or percentages written by the user.
    max_surge: int | str = "25%"
    max_unavailable: int | str = "25%"


@dataclass(frozen=True, slots=True)
class ReplicaSetSpec:
    name: str
    namespace: str
    template: PodTemplate
    replicas: int = 1
    labels: dict[str, str] = field(default_factory=dict)
    # spec.selector (None: select by the template's labels).
    selector: LabelSelector | None = None


@dataclass(frozen=True, slots=True)
class PodGroupSpec:
    """scheduling.x-k8s.io/v1alpha1 PodGroup (scheduler-plugins coscheduling)."""

    name: str
    namespace: str
    min_member: int
    min_resources: Resources = field(default_factory=dict)
    schedule_timeout_s: float | None = None


WorkloadObject = PodSpecObject | JobSpec | DeploymentSpec | ReplicaSetSpec | PodGroupSpec
