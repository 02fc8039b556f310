"""Units. Names carry the unit (``mem_bytes``, ``bw_gbps``); these helpers convert between them.

Bandwidths are GB/s = 1e9 bytes per second, *per direction*, unless a name says ``bidir``.
Memory sizes are bytes; MiB/GiB are binary (2**20, 2**30) as NVML and nvidia-smi report them.
"""

from __future__ import annotations

KIB = 1024
MIB = 1024**2
GIB = 1024**3
TIB = 1024**4
GB = 10**9

# Usable PCIe bandwidth per lane and direction in GB/s after line encoding
# (8b/10b for gen 1-2, 128b/130b for gen 3-5, FLIT/PAM4 for gen 6; PCI-SIG figures).
PCIE_LANE_GBPS: dict[int, float] = {
    1: 0.25,
    2: 0.5,
    3: 0.985,
    4: 1.969,
    5: 3.938,
    6: 7.563,
}


def pcie_gbps(gen: int, width: int) -> float:
    """Per-direction bandwidth of a PCIe link of ``gen`` and ``width`` lanes, in GB/s."""
    if gen not in PCIE_LANE_GBPS:
        raise ValueError(f"unknown PCIe generation {gen}; known: {sorted(PCIE_LANE_GBPS)}")
    if width not in (1, 2, 4, 8, 16, 32):
        raise ValueError(f"PCIe width x{width} is not one of x1, x2, x4, x8, x16, x32")
    return round(PCIE_LANE_GBPS[gen] * width, 3)


def mib_to_bytes(mib: float) -> int:
    return round(mib * MIB)


def bytes_to_mib(num_bytes: int) -> int:
    return num_bytes // MIB
