"""Test factories: small, explicit hardware built in a line or two."""

from __future__ import annotations

from gpuplane.core.ids import GpuIndex, GpuModelName, NicIndex, NumaId
from gpuplane.fit.workload_objects import ContainerSpec, PodTemplate, RestartPolicy
from gpuplane.kubelet.config import KubeletConfig
from gpuplane.slicing.sharing.config import DevicePluginConfig
from gpuplane.topology.bandwidth import BandwidthModel
from gpuplane.topology.catalog import get_gpu_model
from gpuplane.topology.links import parse_link
from gpuplane.topology.model import Gpu, Nic, NodeTopology, NumaNode
from gpuplane.topology.presets import load_preset
from gpuplane.twin.scenario.mig import MigPoolSpec
from gpuplane.twin.scenario.spec import NodePoolSpec


def make_topology(
    labels: list[list[str]],
    *,
    numa_of_gpu: list[int] | None = None,
    num_nics: int = 0,
    model: str = "H100-80GB-SXM",
    name: str = "test-node",
    cpus_per_numa: int = 8,
) -> NodeTopology:
    """A node from a device x device label matrix (GPUs first, then ``num_nics`` NICs)."""
    n = len(labels)
    num_gpus = n - num_nics
    gpu_model = get_gpu_model(model)
    numa_of_gpu = numa_of_gpu if numa_of_gpu is not None else [0] * num_gpus
    numa_ids = sorted(set(numa_of_gpu)) or [0]
    numa_nodes = tuple(
        NumaNode(
            id=NumaId(i),
            cpus=tuple(range(i * cpus_per_numa, (i + 1) * cpus_per_numa)),
            memory_bytes=64 * 1024**3,
        )
        for i in numa_ids
    )
    gpus = tuple(
        Gpu(
            index=GpuIndex(i),
            model=GpuModelName(gpu_model.name),
            numa=NumaId(numa_of_gpu[i]),
            numa_affinity=(NumaId(numa_of_gpu[i]),),
            pcie_gbps=gpu_model.pcie_gbps,
        )
        for i in range(num_gpus)
    )
    nics = tuple(Nic(index=NicIndex(i), name=f"mlx5_{i}") for i in range(num_nics))
    links = tuple(tuple(parse_link(c) for c in row) for row in labels)
    bw = BandwidthModel(
        nvlink_gbps_per_link=gpu_model.nvlink_gbps_per_link, pcie_gbps=gpu_model.pcie_gbps
    )
    bandwidth = tuple(tuple(bw.for_link(c) for c in row) for row in links)
    return NodeTopology(
        name=name,
        gpus=gpus,
        nics=nics,
        numa_nodes=numa_nodes,
        links=links,
        bandwidth_gbps=bandwidth,
    )


def all_pairs(num_gpus: int, label: str) -> list[list[str]]:
    """Every GPU pair ``label`` (e.g. ``NV18`` for an NVSwitch box)."""
    return [["X" if i == j else label for j in range(num_gpus)] for i in range(num_gpus)]


# ----- twin -----


def make_pool(
    preset: str = "seed-8gpu",
    count: int = 2,
    name: str = "pool",
    *,
    kubelet: KubeletConfig | None = None,
    device_plugin: DevicePluginConfig | None = None,
    mig: MigPoolSpec | None = None,
) -> NodePoolSpec:
    """``count`` nodes of a topology preset, with the pool options the scenario tests vary."""
    return NodePoolSpec(
        name=name,
        topology=load_preset(preset),
        count=count,
        kubelet=kubelet if kubelet is not None else KubeletConfig(),
        device_plugin=device_plugin,
        mig=mig,
    )


def make_template(
    gpus: int = 1,
    cpu_m: int = 1000,
    mem_gib: int = 4,
    restart: str = "Never",
    *,
    labels: dict[str, str] | None = None,
    priority: int = 0,
) -> PodTemplate:
    """A one-container pod template requesting ``gpus`` whole GPUs (limits = requests)."""
    req = {"cpu": cpu_m, "memory": mem_gib * 1024**3}
    if gpus:
        req["nvidia.com/gpu"] = gpus
    container = ContainerSpec("main", requests=req, limits={"nvidia.com/gpu": gpus} if gpus else {})
    return PodTemplate(
        labels=dict(labels or {}),
        containers=(container,),
        restart_policy=RestartPolicy(restart),
        priority=priority,
    )
