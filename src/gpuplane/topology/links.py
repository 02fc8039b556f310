"""Link classes between two devices, named exactly as ``nvidia-smi topo -m`` prints them.

Legend (nvidia-smi): X = self; NV# = a bonded set of # NVLinks; PIX = at most one PCIe bridge;
PXB = several PCIe bridges without the host bridge; PHB = through a PCIe host bridge (the CPU);
NODE = between host bridges within one NUMA node; SYS = across the SMP interconnect between NUMA
nodes (QPI/UPI/xGMI). Older drivers printed ``SOC`` for what is now ``SYS``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from gpuplane.core.errors import InputError


class LinkClass(StrEnum):
    X = "X"
    NV = "NV"
    PIX = "PIX"
    PXB = "PXB"
    PHB = "PHB"
    NODE = "NODE"
    SYS = "SYS"


# Closeness order, nearest first; NVLink beats every PCIe path.
_RANK: dict[LinkClass, int] = {
    LinkClass.X: 0,
    LinkClass.NV: 1,
    LinkClass.PIX: 2,
    LinkClass.PXB: 3,
    LinkClass.PHB: 4,
    LinkClass.NODE: 5,
    LinkClass.SYS: 6,
}

# NVML nvmlGpuTopologyLevel_t -> the class nvidia-smi prints for a PCIe path.
# INTERNAL (0, two GPUs on one board) has no letter code of its own; it is the nearest PCIe level.
NVML_LEVEL_TO_CLASS: dict[int, LinkClass] = {
    0: LinkClass.PIX,
    10: LinkClass.PIX,
    20: LinkClass.PXB,
    30: LinkClass.PHB,
    40: LinkClass.NODE,
    50: LinkClass.SYS,
}

_NV_RE = re.compile(r"^NV(\d+)$")
LINK_TOKEN_RE = re.compile(r"X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC")
VALID_TOKENS = "X, NV<n>, PIX, PXB, PHB, NODE or SYS"


@dataclass(frozen=True, slots=True, order=False)
class Link:
    """One cell of the ``topo -m`` matrix: a class, plus the bonded NVLink count for NV#."""

    cls: LinkClass
    num_nvlinks: int = 0

    def __post_init__(self) -> None:
        if (self.cls is LinkClass.NV) != (self.num_nvlinks > 0):
            raise ValueError(f"NV links need a positive link count, other classes none: {self!r}")

    @property
    def label(self) -> str:
        return f"NV{self.num_nvlinks}" if self.cls is LinkClass.NV else self.cls.value

    @property
    def rank(self) -> int:
        """0 for self, 1 for NVLink, then PIX < PXB < PHB < NODE < SYS."""
        return _RANK[self.cls]

    @property
    def is_nvlink(self) -> bool:
        return self.cls is LinkClass.NV

    def __str__(self) -> str:
        return self.label


SELF = Link(LinkClass.X)


def nvlink(num_links: int) -> Link:
    return Link(LinkClass.NV, num_links)


def parse_link(token: str) -> Link:
    """Parse one matrix cell (``NV18``, ``PXB``, ``SOC``...); InputError without a location."""
    tok = token.strip()
    m = _NV_RE.match(tok)
    if m is not None:
        count = int(m.group(1))
        if count <= 0:
            raise InputError(f"{tok!r} has no NVLinks", expected="NV<n> with n >= 1")
        return nvlink(count)
    if tok == "SOC":
        return Link(LinkClass.SYS)
    try:
        cls = LinkClass(tok)
    except ValueError:
        raise InputError(f"{tok!r} is not a link class", expected=VALID_TOKENS) from None
    if cls is LinkClass.NV:
        raise InputError("'NV' without a link count", expected="NV<n>, e.g. NV18")
    return Link(cls)
