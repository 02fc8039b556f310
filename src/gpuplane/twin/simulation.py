"""Build a cluster from a scenario and run it: the twin's main entry point.

``Simulation(...).run(until_s)`` returns a ``RunResult`` and writes nothing; the CLI writes the
files. The same scenario and seed give the same result, event for event.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from gpuplane.api.resources import CPU, MEMORY, NVIDIA_GPU, PODS
from gpuplane.api.strategies import SharingStrategy
from gpuplane.autoscaler.keda.model import ScaledObjectIn
from gpuplane.core.kernel import EventHandle, Priority, TwinError
from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.plugins.registry import in_tree_registry
from gpuplane.slicing.devices import DeviceSlot, whole_gpus
from gpuplane.slicing.devices import replicas as replica_slots
from gpuplane.twin import metrics
from gpuplane.twin.autoscaling.keda import Autoscaling
from gpuplane.twin.autoscaling.slo import SloScaling
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.events import Event
from gpuplane.twin.cluster.invariants import violations
from gpuplane.twin.cluster.objects import Node
from gpuplane.twin.controllers.arrivals import Arrivals
from gpuplane.twin.controllers.deployment import DeploymentController
from gpuplane.twin.controllers.job import JobController
from gpuplane.twin.controllers.podgroup import PodGroupController
from gpuplane.twin.controllers.replicaset import ReplicaSetController
from gpuplane.twin.dra.state import DraObjectsSpec, DraState
from gpuplane.twin.kubelet.simulator import KubeletSim
from gpuplane.twin.mig.controller import MigRepartitioner
from gpuplane.twin.mig.devices import MIG_CONFIG_LABEL, MIG_STATE_LABEL, mig_slots
from gpuplane.twin.mig.manager import MigConfigChange, MigManager
from gpuplane.twin.scenario.serving_spec import ServingSpec
from gpuplane.twin.scenario.settings import TwinSettings
from gpuplane.twin.scenario.spec import NodePoolSpec, Workload
from gpuplane.twin.scheduling.loop import SchedulerLoop
from gpuplane.twin.scheduling.placement import PlacementPolicy
from gpuplane.twin.serving.runtime import ServingRuntime
from gpuplane.twin.summary import build_summary


class NodeAgent(Protocol):
    """Brings a node's GPU stack up (the GPU Operator) and reacts to faults and upgrades."""

    def start(self, cluster: Cluster, kubelet: KubeletSim, until_s: float) -> None: ...

    def summary(self) -> dict[str, object]: ...


@dataclass(frozen=True, slots=True)
class RunResult:
    seed: int
    until_s: float
    num_events: int
    summary: dict[str, Any]
    events: tuple[Event, ...]
    timeseries: tuple[dict[str, Any], ...]


def default_allocatable(pool: NodePoolSpec) -> dict[str, int]:
    topo = pool.topology
    cpus = sum(len(n.cpus) for n in topo.cpu_numa_nodes())
    memory = sum(n.memory_bytes or 0 for n in topo.numa_nodes)
    out = {CPU: cpus * 1000, MEMORY: memory, PODS: 110}
    out.update(pool.allocatable)
    return out


def make_node(pool: NodePoolSpec, index: int) -> Node:
    name = f"{pool.name}-{index}"
    alloc = default_allocatable(pool)
    num_gpus = pool.topology.num_gpus
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "gpuplane.io/node-pool": pool.name,
        **pool.labels,
    }
    slots, ext = advertised_devices(pool)
    if pool.dra:
        slots, ext = [], {}  # the DRA driver publishes the GPUs; no device plugin
    if pool.mig is not None:
        slots, ext = mig_slots(pool.topology, pool.mig.layouts, pool.mig.strategy)
        labels.update(
            {
                MIG_CONFIG_LABEL: pool.mig.config,
                MIG_STATE_LABEL: "success",
                "nvidia.com/mig.strategy": pool.mig.strategy,
            }
        )
    capacity = {**alloc, NVIDIA_GPU: len(slots), **{k: len(v) for k, v in ext.items()}}
    return Node(
        name=name,
        pool=pool.name,
        topology=pool.topology,
        labels=labels,
        taints=list(pool.taints),
        capacity=capacity,
        allocatable=alloc,
        gpu_healthy=[True] * num_gpus,
        device_slots=slots,
        gpu_owner=[None] * len(slots),
        ext_slots=ext,
        ext_owner={k: [None] * len(v) for k, v in ext.items()},
        sharing=pool.device_plugin,
        mig_layouts=list(pool.mig.layouts) if pool.mig is not None else None,
        mig_strategy=pool.mig.strategy if pool.mig is not None else "",
        kubelet=pool.kubelet,
        dra=pool.dra,
    )


def advertised_devices(pool: NodePoolSpec) -> tuple[list[DeviceSlot], dict[str, list[DeviceSlot]]]:
    """``nvidia.com/gpu`` devices and other device resources the pool's device plugin lists."""
    num_gpus = pool.topology.num_gpus
    cfg = pool.device_plugin
    if cfg is None or cfg.strategy is SharingStrategy.NONE or cfg.replicas_of(NVIDIA_GPU) <= 1:
        return whole_gpus(num_gpus), {}
    slots = replica_slots(num_gpus, cfg.replicas_of(NVIDIA_GPU))
    if cfg.rename_by_default:
        return [], {cfg.advertised_name(NVIDIA_GPU): slots}
    return slots, {}


def default_placement(settings: TwinSettings) -> PlacementPolicy:
    """kube-scheduler's framework with the scenario's profiles (or one default profile)."""
    profiles = settings.scheduler_profiles or (
        ProfileConfig(schedulerName=settings.scheduler_name),
    )
    return Scheduler(profiles, registry=in_tree_registry())


class Simulation:
    def __init__(
        self,
        node_pools: Sequence[NodePoolSpec],
        workloads: Sequence[Workload],
        *,
        seed: int,
        settings: TwinSettings | None = None,
        placement: PlacementPolicy | None = None,
        node_agent: NodeAgent | None = None,
        check_invariants: bool = False,
        name: str = "scenario",
        dra: DraObjectsSpec | None = None,
        mig_config_changes: tuple[MigConfigChange, ...] = (),
        serving: ServingSpec | None = None,
        scaled_objects: tuple[ScaledObjectIn, ...] = (),
    ) -> None:
        self.name = name
        self.settings = settings or TwinSettings()
        self.cluster = Cluster(self.settings, seed)
        if dra is not None or any(p.dra for p in node_pools):
            self.cluster.dra = DraState.from_spec(dra or DraObjectsSpec())
        self.workloads = tuple(workloads)
        by_name = {w.name: w for w in self.workloads}
        c = self.cluster
        self.kubelet = KubeletSim(c)
        if c.dra is not None:
            c.on_pod_change.append(c.dra.on_pod)
        self.scheduler = SchedulerLoop(
            c, placement or default_placement(self.settings), self.kubelet
        )
        self.replica_sets = ReplicaSetController(c, self.kubelet, by_name)
        self.deployments = DeploymentController(c, self.replica_sets)
        self.jobs = JobController(c, self.kubelet, by_name)
        self.pod_groups = PodGroupController(c)
        self.arrivals = Arrivals(c, self.deployments, self.jobs, self.pod_groups)
        self.node_agent = node_agent
        self.check_invariants = check_invariants
        self.timeseries: list[dict[str, Any]] = []
        for pool in node_pools:
            for i in range(pool.count):
                c.store.add_node(make_node(pool, i))
        self.placement_name = self.scheduler.policy.name
        self.mig_manager = MigManager(c, self.kubelet)
        self.serving = (
            ServingRuntime(c, self.kubelet, serving) if serving and serving.services else None
        )
        self.autoscaling = (
            Autoscaling(c, self.deployments, scaled_objects) if scaled_objects else None
        )
        self.slo_scaling = (
            SloScaling(c, self.deployments, self.serving, serving.slo_scalers)
            if self.serving is not None and serving is not None and serving.slo_scalers
            else None
        )
        self.mig_config_changes = mig_config_changes
        dynamic = [p.mig for p in node_pools if p.mig is not None and p.mig.dynamic]
        self.mig_repartitioner = (
            MigRepartitioner(c, dynamic[0].interval_s, dynamic[0].reconfigure_s)
            if dynamic
            else None
        )

    def _sample(self, until_s: float) -> None:
        c = self.cluster
        self.timeseries.append(metrics.sample(c.store, c.now, c.counters))
        nxt = c.now + self.settings.metrics_interval_s
        if nxt <= until_s:
            c.loop.schedule(
                nxt, lambda: self._sample(until_s), priority=Priority.METRICS, label="metrics"
            )

    def _check(self, handle: EventHandle) -> None:
        found = violations(self.cluster.store, self.cluster.counters.get("pods_created", 0))
        if found:
            raise TwinError(
                f"invariant broken after {handle.label!r} at t={handle.t_s:.3f}s: "
                + "; ".join(found[:5])
            )

    def run(
        self, until_s: float, progress: Callable[[float], None] | None = None, steps: int = 100
    ) -> RunResult:
        """Run to ``until_s``; ``progress(t)`` is called ``steps`` times along the way."""
        c = self.cluster
        if self.node_agent is not None:
            self.node_agent.start(c, self.kubelet, until_s)
        else:
            for node in c.store.nodes.values():
                c.store.refresh_node(node)
        c.loop.schedule(
            0.0, lambda: self._sample(until_s), priority=Priority.METRICS, label="metrics"
        )
        self.arrivals.schedule_all(self.workloads, until_s)
        if self.mig_repartitioner is not None:
            self.mig_repartitioner.start(until_s)
        self.mig_manager.schedule(self.mig_config_changes)
        if self.serving is not None:
            self.serving.start(until_s)
        if self.autoscaling is not None:
            self.autoscaling.start(until_s)
        if self.slo_scaling is not None:
            self.slo_scaling.start(until_s)
        on_event = self._check if self.check_invariants else None
        step = until_s / steps if steps else until_s
        t = 0.0
        while t < until_s:
            t = min(until_s, t + step)
            c.loop.run(t, on_event)
            if progress is not None:
                progress(t)
        if self.serving is not None:
            self.serving.advance(until_s)
        summary = build_summary(self, until_s)
        if self.node_agent is not None:
            summary["gpu_operator"] = self.node_agent.summary()
        if self.serving is not None:
            summary["serving"] = self.serving.summary()
        if self.autoscaling is not None:
            summary["autoscaling"] = self.autoscaling.summary()
        if self.slo_scaling is not None:
            summary["slo_scaling"] = self.slo_scaling.summary()
        return RunResult(
            seed=c.seed,
            until_s=until_s,
            num_events=c.loop.num_processed,
            summary=summary,
            events=tuple(c.events.events),
            timeseries=tuple(self.timeseries),
        )
