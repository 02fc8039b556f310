"""Node hardware description files (YAML): the schema, its cross-checks and a located loader.

A platform engineer describes one node: CPUs and NUMA nodes, the PCIe tree (host bridges and
switches), where each GPU and NIC sits in it, and the NVLink fabric. ``build.py`` derives from
that the link classes and bandwidths ``nvidia-smi topo -m`` would show. The presets in
``data/presets`` use the same format, so they double as examples.

Every mistake becomes an :class:`InputError` naming the file, the 1-based line and the field
path (``gpus[3].parent``): pydantic catches wrong types and unknown keys; ``hardware_checks.py``
(run by :class:`HardwareSpec` itself, so no unchecked spec exists) catches broken references and
numbers that cannot all be true at once.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gpuplane.core.units import pcie_gbps
from gpuplane.core.yamlio import validate_yaml
from gpuplane.topology.bandwidth import DEFAULT_INTER_SOCKET_GBPS
from gpuplane.topology.catalog import GpuModel, default_catalog
from gpuplane.topology.hardware_checks import check_hardware_spec

# strict: YAML already yields ints, floats and strings, so ``index: true`` or ``gen: "5"`` is a
# mistake worth reporting rather than a value worth coercing.
_CONFIG = ConfigDict(extra="forbid", strict=True, frozen=True)
# Linux's default remote distance when firmware gives no SLIT (ACPI: local is 10).
DEFAULT_REMOTE_DISTANCE = 21


class PcieLinkSpec(BaseModel):
    """One PCIe link: a device's own link or a switch's uplink."""

    model_config = _CONFIG
    gen: Literal[1, 2, 3, 4, 5, 6] = Field(description="PCIe generation, 1 to 6.")
    width: Literal[1, 2, 4, 8, 16, 32] = Field(description="Lane count: 1, 2, 4, 8, 16 or 32.")

    @property
    def gbps(self) -> float:
        """Per-direction bandwidth in GB/s."""
        return pcie_gbps(self.gen, self.width)


class CpuSpec(BaseModel):
    model_config = _CONFIG
    model: str = Field(min_length=1, description="CPU model, e.g. 'Intel Xeon Platinum 8480C'.")
    sockets: int = Field(ge=1, le=16, description="Number of CPU packages.")
    cores_per_socket: int = Field(ge=1, description="Physical cores per socket.")
    threads_per_core: int = Field(default=1, ge=1, le=8, description="2 with SMT/Hyper-Threading.")


class NumaNodeSpec(BaseModel):
    model_config = _CONFIG
    id: int = Field(ge=0, description="Linux NUMA node id (as in /sys/devices/system/node).")
    cpus: str = Field(default="", description="cpu-list like '0-55,112-167'; empty for GPU memory.")
    memory_gib: float | None = Field(default=None, gt=0, description="Memory of this node, GiB.")
    socket: int = Field(ge=0, description="CPU package this node belongs to, 0-based.")
    kind: Literal["cpu", "gpu-memory"] = Field(
        default="cpu", description="'gpu-memory' for coherent GPU memory (GH200 GPU NUMA ID)."
    )

    @field_validator("cpus", mode="before")
    @classmethod
    def _single_cpu(cls, value: Any) -> Any:
        # ``cpus: 7`` reads as an int in YAML; it is still a valid one-cpu list.
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class BridgeSpec(BaseModel):
    model_config = _CONFIG
    id: str = Field(min_length=1, description="Unique name, referenced by 'parent' fields.")
    kind: Literal["host-bridge", "switch"] = Field(
        description="'host-bridge' (a CPU root complex) or 'switch' (a PCIe switch or port)."
    )
    numa: int | None = Field(default=None, description="Host bridges only: the NUMA node id.")
    parent: str | None = Field(default=None, description="Switches only: the upstream bridge id.")
    pcie: PcieLinkSpec | None = Field(
        default=None, description="Switches only: the uplink; defaults to the top-level 'pcie'."
    )


class GpuSpec(BaseModel):
    model_config = _CONFIG
    index: int = Field(ge=0, description="GPU index as nvidia-smi numbers it, 0..n-1.")
    parent: str = Field(min_length=1, description="Bridge id this GPU sits under.")
    model: str | None = Field(default=None, description="Overrides the node's 'gpu_model'.")
    pcie: PcieLinkSpec | None = Field(
        default=None, description="Overrides the GPU model's own PCIe generation and width."
    )
    host_link: Literal["pcie", "c2c"] = Field(
        default="pcie", description="'c2c' for NVLink-C2C to the CPU (GH200); parent: host bridge."
    )
    memory_numa: int | None = Field(
        default=None, description="NUMA node of the GPU's own memory (kind gpu-memory), if any."
    )


class NicSpec(BaseModel):
    model_config = _CONFIG
    name: str = Field(min_length=1, description="RDMA device name, e.g. mlx5_0; NICs keep order.")
    parent: str = Field(min_length=1, description="Bridge id this NIC (port) sits under.")
    speed_gbit: float | None = Field(default=None, gt=0, description="Port speed in Gbit/s.")
    pcie: PcieLinkSpec | None = Field(
        default=None, description="The NIC's PCIe link; defaults to the top-level 'pcie'."
    )


class NvlinkSpec(BaseModel):
    model_config = _CONFIG
    fabric: Literal["none", "nvswitch", "mesh"] = Field(
        default="none",
        description="'nvswitch': every GPU pair gets all the GPU's links (NV18 on H100); "
        "'mesh': only the listed pairs; 'none': no NVLink.",
    )
    pairs: list[list[int]] = Field(
        default=[], description="For 'mesh': [gpu_a, gpu_b, bonded link count] per linked pair."
    )


class HardwareSpec(BaseModel):
    """One node's hardware, as a user or a preset writes it."""

    model_config = _CONFIG
    name: str = Field(min_length=1, description="Node or preset name.")
    description: str = Field(default="", description="One line on what this hardware is.")
    machine: str | None = Field(
        default=None, description="DMI product name (GFD nvidia.com/gpu.machine), if known."
    )
    sources: list[str] = Field(default=[], description="Where the facts in this file come from.")
    assumptions: list[str] = Field(default=[], description="Facts here that were not verified.")
    gpu_model: str = Field(min_length=1, description="GPU catalog name or alias, e.g. H100.")
    cpu: CpuSpec = Field(description="CPU model and counts.")
    numa_nodes: list[NumaNodeSpec] = Field(min_length=1, description="Every NUMA node.")
    numa_distances: list[list[int]] | None = Field(
        default=None, description="SLIT matrix in numa_nodes order; default 10 local, 21 remote."
    )
    inter_socket_gbps: float = Field(
        default=DEFAULT_INTER_SOCKET_GBPS, gt=0, description="Socket-to-socket GB/s per direction."
    )
    intra_socket_gbps: float | None = Field(
        default=None,
        gt=0,
        description="Cap between host bridges of one socket, GB/s per direction.",
    )
    pcie: PcieLinkSpec | None = Field(
        default=None, description="Default PCIe link of switch uplinks and NICs."
    )
    bridges: list[BridgeSpec] = Field(default=[], description="PCIe host bridges and switches.")
    gpus: list[GpuSpec] = Field(min_length=1, description="The GPUs.")
    nics: list[NicSpec] = Field(default=[], description="Network ports, in nvidia-smi NIC order.")
    nvlink: NvlinkSpec = Field(default=NvlinkSpec(), description="The NVLink fabric.")

    @model_validator(mode="after")
    def _cross_check(self) -> HardwareSpec:
        check_hardware_spec(self)
        return self

    def model_of(self, gpu: GpuSpec) -> GpuModel:
        """The catalog entry of ``gpu`` (its own ``model`` or the node's ``gpu_model``)."""
        return default_catalog().get(gpu.model or self.gpu_model)

    def numa_by_id(self) -> dict[int, NumaNodeSpec]:
        return {n.id: n for n in self.numa_nodes}

    def bridge_by_id(self) -> dict[str, BridgeSpec]:
        return {b.id: b for b in self.bridges}


# ----- loading: YAML text -> HardwareSpec, every failure located -----


def load_hardware_spec(text: str, source: str) -> HardwareSpec:
    """Parse and check a hardware description; any mistake raises a located InputError."""
    return validate_yaml(
        HardwareSpec,
        text,
        source,
        what="a hardware description: a mapping with name, gpu_model, cpu, numa_nodes, gpus, ...",
    )
