"""Build a twin from a scenario: the cluster, its nodes and the list of components, in order.

Two orders are part of a run's behaviour and stay fixed here:

- construction order is the order of the cluster's pod hooks: the resourceclaim controller,
  then the scheduler loop, the PodGroup controller, the serving runtime;
- list order is the order of ``start``: the parts that only react (kubelet, scheduler loop,
  workload controllers, DRA claims) schedule nothing, then ClusterPolicy updates, the node agent
  (or static nodes), the metrics sampler, arrivals, the MIG repartitioner, the MIG manager, the
  serving runtime, KEDA/HPA, the SLO scaler. Same-time, same-priority events run in the order
  they were scheduled, so this order decides ties.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from gpuplane.autoscaler.keda.model import ScaledObjectIn
from gpuplane.operator.cluster_policy import ClusterPolicy
from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.plugins.registry import in_tree_registry
from gpuplane.slicing.mig.controller_types import ControlSettings
from gpuplane.twin.adapters import (
    InvariantChecker,
    NodeAgent,
    NodeAgentComponent,
    PolicyUpdates,
    StaticNodes,
)
from gpuplane.twin.autoscaling.keda import Autoscaling
from gpuplane.twin.autoscaling.slo import SloScaling
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.nodes import make_node
from gpuplane.twin.component import TwinComponent
from gpuplane.twin.controllers.arrivals import Arrivals
from gpuplane.twin.controllers.deployment import DeploymentController
from gpuplane.twin.controllers.job import JobController
from gpuplane.twin.controllers.podgroup import PodGroupController
from gpuplane.twin.controllers.replicaset import ReplicaSetController
from gpuplane.twin.dra.state import DraState
from gpuplane.twin.kubelet.simulator import KubeletSim
from gpuplane.twin.metrics import MetricsSampler
from gpuplane.twin.mig.controller import MigRepartitioner
from gpuplane.twin.mig.manager import MigManager
from gpuplane.twin.operator.node_agent import OperatorNodeAgent
from gpuplane.twin.scenario.dra import DraObjectsSpec
from gpuplane.twin.scenario.mig import MigConfigChange
from gpuplane.twin.scenario.serving_spec import ServingSpec
from gpuplane.twin.scenario.settings import TwinSettings
from gpuplane.twin.scenario.spec import NodePoolSpec, ScenarioSpec, Workload
from gpuplane.twin.scheduling.loop import SchedulerLoop
from gpuplane.twin.scheduling.placement import PlacementPolicy
from gpuplane.twin.serving.runtime import ServingRuntime
from gpuplane.twin.simulation import Simulation


def default_placement(settings: TwinSettings) -> PlacementPolicy:
    """kube-scheduler's framework with the scenario's profiles (or one default profile)."""
    profiles = settings.scheduler_profiles or (
        ProfileConfig(schedulerName=settings.scheduler_name),
    )
    return Scheduler(profiles, registry=in_tree_registry())


def simulation_from_spec(
    spec: ScenarioSpec, *, seed: int, check_invariants: bool = False, keep_events: bool = True
) -> Simulation:
    """A loaded scenario's twin, with the GPU Operator on every node."""
    return build_simulation(
        spec.node_pools,
        spec.workloads,
        seed=seed,
        settings=replace(spec.control_plane, keep_events=keep_events),
        node_agent=OperatorNodeAgent(spec.cluster_policy, spec.operator, spec.faults),
        policy_updates=spec.cluster_policy_updates,
        check_invariants=check_invariants,
        name=spec.name,
        dra=spec.dra,
        mig_config_changes=spec.mig_config_changes,
        serving=spec.serving,
        scaled_objects=spec.scaled_objects,
    )


def build_simulation(
    node_pools: Sequence[NodePoolSpec],
    workloads: Sequence[Workload],
    *,
    seed: int,
    settings: TwinSettings | None = None,
    placement: PlacementPolicy | None = None,
    node_agent: NodeAgent | None = None,
    policy_updates: tuple[tuple[float, ClusterPolicy], ...] = (),
    check_invariants: bool = False,
    name: str = "scenario",
    dra: DraObjectsSpec | None = None,
    mig_config_changes: tuple[MigConfigChange, ...] = (),
    serving: ServingSpec | None = None,
    scaled_objects: tuple[ScaledObjectIn, ...] = (),
) -> Simulation:
    """A twin of ``node_pools`` running ``workloads``; each optional part of the scenario adds
    its component. Without a node agent the nodes are ready with their devices at t = 0."""
    settings = settings or TwinSettings()
    cluster = Cluster(settings, seed)
    claims = (
        DraState.from_spec(dra or DraObjectsSpec())
        if dra is not None or any(p.dra for p in node_pools)
        else None
    )
    cluster.dra = claims
    kubelet = KubeletSim(cluster)
    if claims is not None:
        cluster.on_pod_change.append(claims.on_pod)  # the resourceclaim controller
    scheduler = SchedulerLoop(cluster, placement or default_placement(settings), kubelet)
    by_name = {w.name: w for w in workloads}
    replica_sets = ReplicaSetController(cluster, kubelet, by_name)
    deployments = DeploymentController(cluster, replica_sets)
    jobs = JobController(cluster, kubelet, by_name)
    pod_groups = PodGroupController(cluster)
    arrivals = Arrivals(cluster, deployments, jobs, pod_groups, tuple(workloads))
    for pool in node_pools:
        for i in range(pool.count):
            cluster.store.add_node(make_node(pool, i))
    components: list[TwinComponent] = [
        kubelet,
        scheduler,
        replica_sets,
        deployments,
        jobs,
        pod_groups,
    ]
    if claims is not None:
        components.append(claims)
    components += _gpu_stack(cluster, kubelet, node_agent, policy_updates)
    components += [MetricsSampler(cluster), arrivals]
    components += _devices(cluster, kubelet, node_pools, mig_config_changes)
    components += _serving(cluster, kubelet, deployments, serving, scaled_objects)
    if check_invariants:
        components.append(InvariantChecker(cluster))
    return Simulation(cluster, components, name=name, placement=scheduler.policy.name)


def _gpu_stack(
    cluster: Cluster,
    kubelet: KubeletSim,
    node_agent: NodeAgent | None,
    policy_updates: tuple[tuple[float, ClusterPolicy], ...],
) -> list[TwinComponent]:
    """The node agent and the ClusterPolicy updates it applies; without one, ready nodes."""
    if node_agent is None:
        if policy_updates:
            raise ValueError("ClusterPolicy updates need a node agent to apply them")
        return [StaticNodes(cluster)]
    updates = [PolicyUpdates(cluster, node_agent, policy_updates)] if policy_updates else []
    return [*updates, NodeAgentComponent(node_agent, cluster, kubelet)]


def _devices(
    cluster: Cluster,
    kubelet: KubeletSim,
    node_pools: Sequence[NodePoolSpec],
    changes: tuple[MigConfigChange, ...],
) -> list[TwinComponent]:
    """gpuplane's MIG controller (pools with ``mig.dynamic``) and NVIDIA's MIG manager."""
    reconfigure = {p.name: p.mig.reconfigure_s for p in node_pools if p.mig is not None}
    manager = MigManager(cluster, kubelet, changes, reconfigure)
    dynamic = [p for p in node_pools if p.mig is not None and p.mig.dynamic]
    if not dynamic:
        return [manager]
    first = dynamic[0].mig
    assert first is not None
    # One controller for every dynamic pool: the scenario checks they give the same flags.
    settings = ControlSettings(max_unavailable=first.max_unavailable, allow_evict=first.allow_evict)
    pools = [p.name for p in dynamic]
    controller = MigRepartitioner(cluster, kubelet, manager, pools, first.interval_s, settings)
    return [controller, manager]


def _serving(
    cluster: Cluster,
    kubelet: KubeletSim,
    deployments: DeploymentController,
    serving: ServingSpec | None,
    scaled_objects: tuple[ScaledObjectIn, ...],
) -> list[TwinComponent]:
    """The serving runtime (services), KEDA and the HPA (ScaledObjects), the SLO scaler."""
    out: list[TwinComponent] = []
    runtime = (
        ServingRuntime(cluster, kubelet, serving)
        if serving is not None and serving.services
        else None
    )
    if runtime is not None:
        out.append(runtime)
    if scaled_objects:
        services = (
            {f"{sv.namespace}/{sv.deployment}": sv.name for sv in serving.services}
            if serving is not None
            else {}
        )
        out.append(Autoscaling(cluster, deployments, scaled_objects, services))
    if runtime is not None and serving is not None and serving.slo_scalers:
        out.append(SloScaling(cluster, deployments, runtime, serving.slo_scalers))
    return out
