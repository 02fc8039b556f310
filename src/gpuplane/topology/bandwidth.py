"""Per-direction path bandwidth for a link class, when only the class is known.

Used for topologies read from ``nvidia-smi topo -m`` or NVML, where the PCIe tree is not known.
Presets derive bandwidth from their tree instead (``build.py``); both agree on the rules:

- ``NV<n>``: n bonded links x the GPU generation's per-link, per-direction rate (NVLink 4 and
  older: 25 GB/s, NVLink 5: 50 GB/s; see ``data/gpus.yaml``).
- PIX, PXB, PHB: the devices' PCIe link (both ends; the slower one bounds the path).
- NODE: the PCIe link, capped by the socket's internal fabric when that cap is given.
- SYS: the PCIe link, capped by the inter-socket link (UPI / xGMI / QPI).

The defaults below are stated, not measured; ``docs/references.md`` gives their sources.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.topology.links import Link, LinkClass

# GPU peer-to-peer traffic between CPU sockets, per direction, GB/s, as NCCL's topology model
# rates each CPU generation (NCCL src/graph/topo.h: BDW_QPI_BW 6, SKL_QPI_BW 10, SRP_QPI_BW 22,
# ERP_QPI_BW 40, AMD_ZEN12_BW 16, AMD_ZEN34_BW 24, AMD_ZEN5_BW 32, ARM_BW 6). These sit well
# below the nominal UPI/xGMI rates (shared/reference/topology.md: 40-130 GB/s) because peer
# traffic through the CPU is chopped into small TLPs. A `topo -m` file does not name the CPU, so
# the default is the Sapphire Rapids figure, the host CPU of most H100/H200 systems.
INTER_SOCKET_GBPS_BY_CPU: dict[str, float] = {
    "broadwell": 6.0,
    "skylake": 10.0,
    "sapphire-rapids": 22.0,
    "emerald-rapids": 40.0,
    "amd-zen1-2": 16.0,
    "amd-zen3-4": 24.0,
    "amd-zen5": 32.0,
    "arm": 6.0,
}
DEFAULT_INTER_SOCKET_GBPS = INTER_SOCKET_GBPS_BY_CPU["sapphire-rapids"]


@dataclass(frozen=True, slots=True)
class BandwidthModel:
    nvlink_gbps_per_link: float
    pcie_gbps: float
    inter_socket_gbps: float = DEFAULT_INTER_SOCKET_GBPS
    intra_socket_gbps: float | None = None

    def for_link(self, link: Link) -> float:
        """Per-direction bandwidth of a path of class ``link`` (0.0 for a device to itself)."""
        if link.cls is LinkClass.X:
            return 0.0
        if link.cls is LinkClass.NV:
            return round(link.num_nvlinks * self.nvlink_gbps_per_link, 3)
        if link.cls is LinkClass.SYS:
            return min(self.pcie_gbps, self.inter_socket_gbps)
        if link.cls is LinkClass.NODE and self.intra_socket_gbps is not None:
            return min(self.pcie_gbps, self.intra_socket_gbps)
        return self.pcie_gbps
