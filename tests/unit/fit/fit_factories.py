"""Small FitClusters built by hand: DGX H100 nodes (GPUs 0-3 on NUMA 0, 4-7 on NUMA 1)."""

from __future__ import annotations

from gpuplane.api.owner import OwnerRef
from gpuplane.api.qos import QosClass
from gpuplane.api.taints import Taint
from gpuplane.fit.model import FitCluster, FitNode, FitPod
from gpuplane.fit.workload import FitWorkload, WorkloadPod
from gpuplane.kubelet.config import CpuManagerPolicy, KubeletConfig, TopologyScope
from gpuplane.kubelet.topology_manager.policy import PolicyName
from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.framework.types import ContainerInfo, PodInfo
from gpuplane.scheduler.plugins.registry import in_tree_registry
from gpuplane.topology.gfd_hardware import InferredHardware
from gpuplane.topology.presets import load_preset

GIB = 2**30
SNC = KubeletConfig(
    topology_manager_policy=PolicyName.SINGLE_NUMA_NODE,
    topology_manager_scope=TopologyScope.POD,
    cpu_manager_policy=CpuManagerPolicy.STATIC,
    reserved_cpus=frozenset({0, 1}),
)


def h100(
    name: str,
    *,
    kubelet: KubeletConfig | None = None,
    hardware: bool = True,
    taints: tuple[Taint, ...] = (),
    unschedulable: bool = False,
) -> FitNode:
    topo = load_preset("dgx-h100") if hardware else None
    return FitNode(
        name=name,
        labels={"kubernetes.io/hostname": name},
        taints=taints,
        unschedulable=unschedulable,
        allocatable={"cpu": 200_000, "memory": 2000 * GIB, "pods": 110, "nvidia.com/gpu": 8},
        hardware=InferredHardware(topo, "test preset dgx-h100", True),
        kubelet=kubelet or KubeletConfig(),
    )


def info(
    name: str,
    gpus: int,
    *,
    cpu: int = 8000,
    priority: int = 0,
    ns: str = "t",
    guaranteed: bool = False,
    group: str | None = None,
) -> PodInfo:
    requests = {"cpu": cpu, "memory": 64 * GIB, "nvidia.com/gpu": gpus}
    return PodInfo(
        uid=f"uid-{ns}-{name}",
        namespace=ns,
        name=name,
        requests=requests,
        priority=priority,
        qos=QosClass.GUARANTEED if guaranteed else QosClass.BURSTABLE,
        containers=(ContainerInfo("main", requests),),
        pod_group=group,
    )


def bound(
    name: str,
    node: str,
    gpus: int,
    *,
    ids: tuple[int, ...] | None = None,
    priority: int = 0,
    start: float = 0.0,
    owner: str | None = "ReplicaSet",
    cpu: int = 8000,
) -> FitPod:
    return FitPod(
        info(name, gpus, priority=priority, cpu=cpu),
        node,
        "Running",
        start,
        owner=OwnerRef(owner, f"{name}-rs", "t") if owner else None,
        gpu_ids=ids,
    )


def workload(*pods: PodInfo, kind: str = "Deployment/w") -> FitWorkload:
    return FitWorkload(tuple(WorkloadPod(p, kind, f"t/{kind}") for p in pods))


def default_scheduler() -> Scheduler:
    return Scheduler([ProfileConfig()], registry=in_tree_registry())


def cluster(*nodes: FitNode, pods: tuple[FitPod, ...] = ()) -> FitCluster:
    return FitCluster(nodes=nodes, pods=pods, now_s=1000.0)
