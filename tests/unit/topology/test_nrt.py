from __future__ import annotations

from dataclasses import replace

import pytest

from gpuplane.api.resources import CPU, MEMORY, NVIDIA_GPU
from gpuplane.core.errors import InputError
from gpuplane.core.ids import NumaId
from gpuplane.core.units import GIB
from gpuplane.topology.model import NodeTopology, NumaKind, NumaNode
from gpuplane.topology.nrt import (
    TopologyManagerPolicy,
    TopologyManagerScope,
    ZoneCost,
    ZoneResource,
    node_resource_topology,
)
from tests.factories import all_pairs, make_topology


def two_socket() -> NodeTopology:
    """8 GPUs, 4 per NUMA node; 8 CPUs and 64 GiB per node (tests.factories defaults)."""
    return make_topology(all_pairs(8, "NV18"), numa_of_gpu=[0, 0, 0, 0, 1, 1, 1, 1])


def test_zones_per_numa_node() -> None:
    nrt = node_resource_topology(two_socket(), node_name="gpu-node-1")
    assert nrt.node_name == "gpu-node-1"
    assert [z.name for z in nrt.zones] == ["node-0", "node-1"]
    assert {z.type for z in nrt.zones} == {"Node"}
    zone = nrt.zone(0)
    assert zone.resources == (
        ZoneResource(CPU, 8, 8, 8),
        ZoneResource(MEMORY, 64 * GIB, 64 * GIB, 64 * GIB),
        ZoneResource(NVIDIA_GPU, 4, 4, 4),
    )
    assert nrt.attributes == (
        ("topologyManagerPolicy", "single-numa-node"),
        ("topologyManagerScope", "container"),
    )
    assert nrt.policy is TopologyManagerPolicy.SINGLE_NUMA_NODE
    assert nrt.scope is TopologyManagerScope.CONTAINER


def test_default_costs_are_the_kernel_defaults() -> None:
    nrt = node_resource_topology(two_socket())
    assert nrt.zone(0).costs == (ZoneCost("node-0", 10), ZoneCost("node-1", 20))
    assert nrt.zone(1).costs == (ZoneCost("node-0", 20), ZoneCost("node-1", 10))
    assert any("kernel defaults" in n for n in nrt.notes)


def test_costs_follow_the_distance_table() -> None:
    topo = replace(two_socket(), numa_distances=((10, 21), (21, 10)))
    nrt = node_resource_topology(topo)
    assert [c.value for c in nrt.zone(1).costs] == [21, 10]
    assert nrt.notes == ()


def test_reserved_and_allocated() -> None:
    nrt = node_resource_topology(
        two_socket(),
        reserved_cpus=[0, 1],
        reserved_memory_bytes={0: GIB},
        allocated_cpus=[1, 2, 3, 9],  # CPU 1 is reserved, so it cannot be held by a pod
        allocated_gpus=[0, 5],
    )
    node0, node1 = nrt.zone(0), nrt.zone(1)
    assert node0.resource(CPU) == ZoneResource(CPU, 8, 6, 4)
    assert node1.resource(CPU) == ZoneResource(CPU, 8, 8, 7)
    assert node0.resource(MEMORY) == ZoneResource(MEMORY, 64 * GIB, 63 * GIB, 63 * GIB)
    assert node0.resource(NVIDIA_GPU) == ZoneResource(NVIDIA_GPU, 4, 4, 3)
    assert node1.resource(NVIDIA_GPU) == ZoneResource(NVIDIA_GPU, 4, 4, 3)


def test_time_slicing_replicas_multiply_gpus() -> None:
    nrt = node_resource_topology(
        two_socket(), gpu_replicas=4, allocated_gpus=[0], gpu_resource="nvidia.com/gpu.shared"
    )
    assert nrt.zone(0).resource("nvidia.com/gpu.shared") == ZoneResource(
        "nvidia.com/gpu.shared", 16, 16, 12
    )
    assert nrt.zone(0).resource(NVIDIA_GPU) is None


def test_zone_with_nothing_allocatable_shows_reserved_cpus() -> None:
    topo = make_topology(all_pairs(2, "NV18"), numa_of_gpu=[1, 1])
    topo = replace(
        topo,
        numa_nodes=(
            NumaNode(NumaId(0), cpus=tuple(range(8))),
            replace(topo.numa_nodes[0], id=NumaId(1), cpus=tuple(range(8, 16))),
        ),
    )
    nrt = node_resource_topology(topo, reserved_cpus=range(8))
    assert nrt.zone(0).resources == (ZoneResource(CPU, 8, 0, 0),)
    # All CPUs of node 1 allocatable; GPUs only where they are.
    assert nrt.zone(1).resource(NVIDIA_GPU) == ZoneResource(NVIDIA_GPU, 2, 2, 2)


def test_gh200_gpu_memory_node_is_a_zone() -> None:
    topo = make_topology(all_pairs(1, "X"), numa_of_gpu=[0])
    hbm = NumaNode(NumaId(1), memory_bytes=96 * GIB, kind=NumaKind.GPU_MEMORY)
    empty = NumaNode(NumaId(2), kind=NumaKind.GPU_MEMORY)
    gpu = replace(topo.gpus[0], memory_numa=NumaId(1))
    topo = replace(topo, gpus=(gpu,), numa_nodes=(topo.numa_nodes[0], hbm, empty))
    nrt = node_resource_topology(topo)
    assert [z.name for z in nrt.zones] == ["node-0", "node-1", "node-2"]
    assert nrt.zone(1).resources == (ZoneResource(MEMORY, 96 * GIB, 96 * GIB, 96 * GIB),)
    assert nrt.zone(2).resources == (ZoneResource(CPU, 0, 0, 0),)
    # The GPU counts where its PCI function is (the CPU node), as the device plugin reports it.
    assert nrt.zone(0).resource(NVIDIA_GPU) == ZoneResource(NVIDIA_GPU, 1, 1, 1)


def test_gpu_without_numa_is_in_no_zone() -> None:
    topo = make_topology(all_pairs(2, "SYS"))
    topo = replace(topo, gpus=(replace(topo.gpus[0], numa=None), topo.gpus[1]))
    nrt = node_resource_topology(topo)
    assert nrt.zone(0).resource(NVIDIA_GPU) == ZoneResource(NVIDIA_GPU, 1, 1, 1)
    assert any("GPU0 has no NUMA node" in n for n in nrt.notes)


def test_zones_sorted_by_numa_id() -> None:
    topo = two_socket()
    topo = replace(topo, numa_nodes=tuple(reversed(topo.numa_nodes)))
    assert [z.numa for z in node_resource_topology(topo).zones] == [0, 1]


def test_policy_and_scope_are_validated() -> None:
    nrt = node_resource_topology(two_socket(), policy="best-effort", scope="pod")
    assert nrt.attributes[0] == ("topologyManagerPolicy", "best-effort")
    with pytest.raises(InputError, match="single-numa-node"):
        node_resource_topology(two_socket(), policy="single-numa")
    with pytest.raises(InputError, match="container, pod"):
        node_resource_topology(two_socket(), scope="node")


def test_bad_ids_are_input_errors() -> None:
    with pytest.raises(InputError, match="reserved CPUs"):
        node_resource_topology(two_socket(), reserved_cpus=[99])
    with pytest.raises(InputError, match=r"GPU indices 0\.\.7"):
        node_resource_topology(two_socket(), allocated_gpus=[8])
    with pytest.raises(InputError, match="gpu_replicas"):
        node_resource_topology(two_socket(), gpu_replicas=0)
    with pytest.raises(KeyError):
        node_resource_topology(two_socket()).zone(5)
