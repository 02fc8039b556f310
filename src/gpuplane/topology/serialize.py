"""A NodeTopology as plain JSON-able data (``gpuplane topo show --json``)."""

from __future__ import annotations

from typing import Any

from gpuplane.core.cpuset import format_cpu_list
from gpuplane.topology.model import NodeTopology


def topology_to_dict(topo: NodeTopology) -> dict[str, Any]:
    g = topo.num_gpus
    return {
        "name": topo.name,
        "source": topo.source,
        "machine": topo.machine,
        "description": topo.description,
        "nvswitch": topo.nvswitch,
        "numa_nodes": [
            {
                "id": n.id,
                "kind": n.kind.value,
                "socket": n.socket,
                "cpus": format_cpu_list(n.cpus),
                "num_cpus": len(n.cpus),
                "memory_bytes": n.memory_bytes,
            }
            for n in topo.numa_nodes
        ],
        "numa_distances": [list(r) for r in topo.numa_distances] if topo.numa_distances else None,
        "pcie_bridges": [
            {
                "id": b.id,
                "kind": b.kind.value,
                "numa": b.numa,
                "parent": b.parent,
                "uplink_gbps": b.uplink_gbps,
            }
            for b in topo.bridges
        ],
        "gpus": [
            {
                "index": gpu.index,
                "model": gpu.model,
                "numa": gpu.numa,
                "numa_affinity": list(gpu.numa_affinity),
                "memory_numa": gpu.memory_numa,
                "cpu_affinity": format_cpu_list(gpu.cpu_affinity),
                "pcie_parent": gpu.parent,
                "pcie_gbps": gpu.pcie_gbps,
                "nearest_nics": topo.nearest_nics(gpu.index),
            }
            for gpu in topo.gpus
        ],
        "nics": [
            {
                "index": nic.index,
                "name": nic.name,
                "numa": nic.numa,
                "pcie_parent": nic.parent,
                "speed_gbit": nic.speed_gbit,
            }
            for nic in topo.nics
        ],
        "device_names": topo.device_names(),
        "links": topo.gpu_link_labels(),
        "gpu_nic_links": [
            [topo.links[i][g + k].label for k in range(len(topo.nics))] for i in range(g)
        ],
        "device_links": topo.link_labels(),
        "bandwidth_gbps": [list(row) for row in topo.bandwidth_gbps],
        "nvlink_islands": topo.nvlink_islands(),
        "notes": list(topo.notes),
    }
