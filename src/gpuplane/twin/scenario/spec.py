"""What the twin simulates, as plain frozen values: the workload objects users wrote as Kubernetes
manifests (translated by ``gpuplane.k8s.manifests.parse`` into ``gpuplane.fit.workload_objects``,
shared with ``gpuplane fit``), how
often they arrive and how long their pods run, and the node pools. The twin never reads YAML
itself; the loaders fill these in.

Resource quantities are canonical integers: ``cpu`` in millicores, ``memory`` and
``ephemeral-storage`` in bytes, every other resource (``nvidia.com/gpu``,
``nvidia.com/mig-1g.10gb``, ``pods``) as a count.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuplane.api.taints import Taint
from gpuplane.fit.workload_objects import Resources, WorkloadObject
from gpuplane.kubelet.config import KubeletConfig
from gpuplane.slicing.sharing.config import DevicePluginConfig
from gpuplane.topology.model import NodeTopology
from gpuplane.twin.scenario.dra import DraObjectsSpec
from gpuplane.twin.scenario.mig import MigConfigChange, MigPoolSpec

if TYPE_CHECKING:
    from gpuplane.autoscaler.keda.model import ScaledObjectIn
    from gpuplane.operator.cluster_policy import ClusterPolicy
    from gpuplane.operator.faults import GpuXidFault, NodeLostFault
    from gpuplane.operator.settings import OperatorSettings
    from gpuplane.twin.scenario.serving_spec import ServingSpec
    from gpuplane.twin.scenario.settings import TwinSettings


# ----- arrivals and run times (twin-only; not part of any manifest) -----


@dataclass(frozen=True, slots=True)
class ArriveAt:
    """The object is created once at ``t_s``."""

    t_s: float = 0.0


@dataclass(frozen=True, slots=True)
class ArrivePoisson:
    """Copies created by a Poisson process (``rate_per_s``) from ``start_s``, ``count`` at most."""

    rate_per_s: float
    count: int
    start_s: float = 0.0


@dataclass(frozen=True, slots=True)
class TraceArrival:
    t_s: float
    duration_s: float | None = None


@dataclass(frozen=True, slots=True)
class ArriveFromTrace:
    """One copy per trace row (times already shifted/scaled by the loader)."""

    source: str
    rows: tuple[TraceArrival, ...]


Arrival = ArriveAt | ArrivePoisson | ArriveFromTrace


@dataclass(frozen=True, slots=True)
class FixedDuration:
    seconds: float


@dataclass(frozen=True, slots=True)
class ExponentialDuration:
    mean_s: float


@dataclass(frozen=True, slots=True)
class UntilEnd:
    """Servers: pods run until the simulation ends (or are evicted)."""


Duration = FixedDuration | ExponentialDuration | UntilEnd


@dataclass(frozen=True, slots=True)
class Workload:
    """One entry of the scenario's ``workloads``: an object, its arrivals, its pods' run times."""

    name: str
    obj: WorkloadObject
    arrival: Arrival = ArriveAt()
    duration: Duration = UntilEnd()
    # Probability that a pod's main container exits non-zero when its run time is up.
    failure_probability: float = 0.0
    source: str = ""


# ----- the whole scenario, resolved -----


@dataclass(frozen=True, slots=True)
class NodePoolSpec:
    """``count`` identical nodes named ``<name>-<i>``."""

    name: str
    topology: NodeTopology
    count: int
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    # Node allocatable before GPUs are advertised: cpu (milli), memory (bytes), pods, ...
    allocatable: Resources = field(default_factory=dict)
    kubelet: KubeletConfig = field(default_factory=KubeletConfig)
    # The device plugin's config for the pool's nodes (time-slicing / MPS); None: none.
    device_plugin: DevicePluginConfig | None = None
    # MIG mode with its initial layouts (twin.scenario.mig.MigPoolSpec); None: MIG disabled.
    mig: MigPoolSpec | None = None
    # NVIDIA's DRA driver instead of the device plugin: GPUs published as ResourceSlices.
    dra: bool = False


@dataclass(frozen=True, slots=True)
class ScenarioSpec:
    """A scenario file, fully read: every manifest translated, every pool's topology resolved.

    Filled in by ``gpuplane.k8s.scenario.loader.load_scenario_spec``. Node pools carry their
    final allocatable cpu (milli), memory (bytes) and pods: the scenario's override, else the
    topology's CPUs and memory minus kube/system reserved and the hard eviction threshold.
    """

    name: str
    description: str
    source: str
    node_pools: tuple[NodePoolSpec, ...]
    control_plane: TwinSettings
    cluster_policy: ClusterPolicy | None
    operator: OperatorSettings
    workloads: tuple[Workload, ...] = ()
    faults: tuple[NodeLostFault | GpuXidFault, ...] = ()
    # (time, the ClusterPolicy from then on), in time order.
    cluster_policy_updates: tuple[tuple[float, ClusterPolicy], ...] = ()
    # DeviceClasses, ResourceClaimTemplates and ResourceClaims (DRA).
    dra: DraObjectsSpec | None = None
    # nvidia.com/mig.config label changes the MIG manager applies.
    mig_config_changes: tuple[MigConfigChange, ...] = ()
    # Services: inference Deployments with their traffic and router.
    serving: ServingSpec | None = None
    # KEDA ScaledObjects (keda.sh/v1alpha1) the twin's KEDA and HPA run.
    scaled_objects: tuple[ScaledObjectIn, ...] = ()
