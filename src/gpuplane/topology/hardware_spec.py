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

import re
import types
from typing import Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from gpuplane.core.errors import InputError, Location
from gpuplane.core.units import pcie_gbps
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


# The last component of a field path: ".key", "[3]" or a bare top-level key.
_LAST_PART = re.compile(r"(\.[^.\[\]]*|\[\d+\]|[^.\[\]]+)$")


class _LineIndex:
    """1-based line of every field path in a YAML node tree; also rejects duplicate keys."""

    def __init__(self, root: yaml.Node, source: str) -> None:
        self.lines: dict[str, int] = {}
        self.source = source
        self._seen: set[int] = set()
        self._walk(root, "")

    def _walk(self, node: yaml.Node, path: str) -> None:
        self.lines.setdefault(path, node.start_mark.line + 1)
        # An alias reuses its anchor's node and may even contain itself (``&a [*a]``): walk each
        # node once; paths below an alias then fall back to the alias's own line.
        if id(node) in self._seen:
            return
        self._seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: set[str] = set()
            for key_node, value_node in node.value:
                key = str(key_node.value)
                child = f"{path}.{key}" if path else key
                if key in keys and key != "<<":
                    loc = Location(self.source, key_node.start_mark.line + 1, child)
                    raise InputError(
                        f"duplicate key {key!r}", expected="each key once", location=loc
                    )
                keys.add(key)
                self.lines[child] = key_node.start_mark.line + 1
                self._walk(value_node, child)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                self._walk(item, f"{path}[{i}]")

    def line_of(self, field: str) -> int | None:
        """The line of ``field``, or of its nearest ancestor present in the file."""
        while field and field not in self.lines:
            shorter = _LAST_PART.sub("", field)
            field = shorter if shorter != field else ""
        return self.lines.get(field)


def _dotted(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _model_at(loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The pydantic model that describes the value at ``loc`` (lists and None unwrapped)."""
    model: type[BaseModel] = HardwareSpec
    for part in loc:
        if isinstance(part, int):
            continue
        info = model.model_fields.get(part)
        inner = _inner_model(info.annotation) if info is not None else None
        if inner is None:
            return None
        model = inner
    return model


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) in (list, Union, types.UnionType):
        for arg in get_args(annotation):
            found = _inner_model(arg)
            if found is not None:
                return found
    return None


def _describe(error: Any) -> tuple[str, str | None]:
    """(problem, expected) in words a user can act on, from one pydantic error."""
    loc, kind, msg = tuple(error["loc"]), error["type"], str(error["msg"])
    if kind == "missing":
        model = _model_at(loc[:-1])
        info = model.model_fields.get(str(loc[-1])) if model is not None else None
        return f"required key {loc[-1]!r} is missing", (
            f"{loc[-1]}: {info.description}" if info and info.description else None
        )
    if kind in ("extra_forbidden", "model_type"):
        model = _model_at(loc if kind == "model_type" else loc[:-1])
        keys = ", ".join(model.model_fields) if model is not None else None
        if kind == "extra_forbidden":
            return f"unknown key {loc[-1]!r}", (f"one of {keys}" if keys else None)
        return f"got {_short(error['input'])}", (f"a mapping with keys {keys}" if keys else None)
    if msg.startswith("Input should be "):
        return f"got {_short(error['input'])}", msg.removeprefix("Input should be ")
    return msg.removeprefix("Value error, "), None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _Loader(yaml.SafeLoader):
    """SafeLoader without YAML 1.1's implicit dates: ``name: 2024-05-01`` stays a string."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _parse_yaml(text: str, source: str) -> tuple[yaml.Node | None, Any]:
    loader: _Loader | None = None
    try:
        loader = _Loader(text)
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = "; ".join(p for p in (err.context, err.problem) if p) or str(err)
        # PyYAML's own wording often already says what it expected ("expected ',' or '}'").
        expected = None if "expected" in problem else "valid YAML"
        raise InputError(
            f"YAML syntax error: {problem}", expected=expected, location=Location(source, line)
        ) from None
    except yaml.reader.ReaderError as err:  # a control character or bad encoding
        line = text.count("\n", 0, err.position) + 1
        raise InputError(
            f"YAML error: {err.reason}", expected="printable text", location=Location(source, line)
        ) from None
    except (yaml.YAMLError, ValueError, RecursionError) as err:
        # ValueError: an explicit ``!!timestamp 2024-13-45``; RecursionError: absurd nesting.
        raise InputError(
            f"YAML error: {err}", expected="valid YAML", location=Location(source)
        ) from None
    finally:
        if loader is not None:
            loader.dispose()


def load_hardware_spec(text: str, source: str) -> HardwareSpec:
    """Parse and check a hardware description; any mistake raises a located InputError."""
    node, data = _parse_yaml(text, source)
    if node is None or data is None:
        raise InputError(
            "the file holds no hardware description",
            expected="a mapping with name, gpu_model, cpu, numa_nodes, gpus, ...",
            location=Location(source, 1),
        )
    index = _LineIndex(node, source)
    try:
        return HardwareSpec.model_validate(data)
    except ValidationError as err:
        # An unknown key is usually a typo that also makes a required key "missing": name it first.
        errors = sorted(err.errors(include_url=False), key=lambda e: e["type"] != "extra_forbidden")
        first = errors[0]
        field = _dotted(tuple(first["loc"]))
        problem, expected = _describe(first)
        if err.error_count() > 1:
            problem += f" (first of {err.error_count()} problems)"
        loc = Location(source, index.line_of(field), field or None)
        raise InputError(problem, expected=expected, location=loc) from None
    except InputError as err:
        field = err.location.field or ""
        loc = Location(source, index.line_of(field), field or None)
        raise InputError(err.problem, expected=err.expected, location=loc) from None
