"""What a user tells ``fit`` about node pools the API cannot describe: hardware and kubelet
configuration per pool, matched to nodes by label selector (``--pools FILE``), and one
KubeletConfiguration for every other node (``--kubelet-config FILE``).

Pools file::

    pools:
      - name: h100                       # for messages
        selector:                        # meta/v1 LabelSelector over node labels
          matchLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
        hardware: dgx-h100               # preset, hardware YAML or `nvidia-smi topo -m` capture
        kubelet:                         # KubeletConfiguration fields (as in scenarios)
          topologyManagerPolicy: single-numa-node
          cpuManagerPolicy: static
          reservedSystemCPUs: "0,1"

The first pool whose selector matches a node configures it. Paths are relative to the file.
``--kubelet-config`` takes a real ``kubelet.config.k8s.io/v1beta1`` KubeletConfiguration: the
fields gpuplane models are read, every other field is listed in the answer's notes as not
modelled (never dropped without a word).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from gpuplane.api.quantity import parse_quantity
from gpuplane.api.selectors import LabelSelector as Selector
from gpuplane.core.cpuset import parse_cpu_list
from gpuplane.core.errors import InputError, Location
from gpuplane.core.textio import exists, read_user_text
from gpuplane.core.yamlio import LineIndex, parse_yaml
from gpuplane.k8s.field_errors import relocate, validate_model
from gpuplane.k8s.manifests.labels import LabelSelector
from gpuplane.kubelet.admission import node_state
from gpuplane.kubelet.config import KubeletConfig
from gpuplane.kubelet.config_section import KubeletSection
from gpuplane.kubelet.cpu_manager import allocate_cpus
from gpuplane.topology.gfd_hardware import InferredHardware
from gpuplane.topology.model import NodeTopology
from gpuplane.topology.resolve import resolve_topology

KUBELET_KIND = "KubeletConfiguration"
KUBELET_API = "kubelet.config.k8s.io/v1beta1"
M = TypeVar("M", bound=BaseModel)
_MODELLED = {a for f in KubeletSection.model_fields.values() if (a := f.alias)}


class _Pool(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    name: str = Field(min_length=1)
    selector: LabelSelector
    hardware: str | None = None
    kubelet: KubeletSection | None = None
    # kubeReserved + systemReserved cpu, for the static CPU manager's reservation.
    reserved_cpu: str | None = Field(default=None, alias="reservedCPU")


class _PoolsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    pools: list[_Pool]


@dataclass(frozen=True, slots=True)
class PoolConfig:
    name: str
    selector: Selector
    hardware: InferredHardware | None
    kubelet: KubeletSection | None
    reserved_milli: int
    source: str


@dataclass(frozen=True, slots=True)
class NodeDefaults:
    """Every pool, in order, and the KubeletConfiguration for nodes no pool configures."""

    pools: tuple[PoolConfig, ...] = ()
    kubelet: KubeletSection | None = None
    kubelet_reserved_milli: int = 0
    kubelet_source: str = ""
    notes: tuple[str, ...] = ()


def _read(path: Path, what: str) -> tuple[Any, LineIndex]:
    try:
        text = read_user_text(path)
    except FileNotFoundError:
        raise InputError("file not found", expected=what, location=Location(str(path))) from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(
            f"cannot read the file ({err})", expected=what, location=Location(str(path))
        ) from None
    node, data = parse_yaml(text, str(path))
    if node is None or not isinstance(data, dict):
        raise InputError("not a YAML mapping", expected=what, location=Location(str(path), 1))
    return data, LineIndex(node, str(path))


def _validated(model: type[M], data: object, path: Path, index: LineIndex) -> M:
    try:
        return validate_model(model, data)
    except InputError as err:
        raise relocate(err, str(path), index.line_of) from None


def _cpu_milli(text: str | None, where: str) -> int:
    if not text:
        return 0
    try:
        return parse_quantity(str(text)).milli_value()
    except (InputError, ValueError) as err:
        raise InputError(
            f"invalid cpu quantity {text!r}: {err}", location=Location(field=where)
        ) from None


def reserved_cpus(
    section: KubeletSection, topo: NodeTopology, reserved_milli: int
) -> frozenset[int]:
    """The static CPU manager's reserved CPUs, as ``node_pools.kubelet_config`` resolves them."""
    if section.reserved_system_cpus is not None:
        return frozenset(parse_cpu_list(section.reserved_system_cpus))
    if section.cpu_manager_policy != "static":
        return frozenset()
    count = max(1, -(-reserved_milli // 1000))
    cpu_topo = node_state(topo, cpu_manager_static=True).cpu_topology
    chosen = allocate_cpus(cpu_topo, count, (), None) if cpu_topo is not None else None
    return frozenset(chosen or ())


def kubelet_of(
    section: KubeletSection | None, topo: NodeTopology | None, reserved_milli: int
) -> KubeletConfig:
    if section is None:
        return KubeletConfig()
    cpus = reserved_cpus(section, topo, reserved_milli) if topo is not None else frozenset()
    return section.config(cpus)


def read_pools(path: Path) -> tuple[PoolConfig, ...]:
    data, index = _read(path, "a pools file (pools: [{name, selector, hardware, kubelet}])")
    spec = _validated(_PoolsFile, data, path, index)
    out = []
    for i, pool in enumerate(spec.pools):
        where = f"pools[{i}]"
        hardware = None
        if pool.hardware is not None:
            ref = pool.hardware
            candidate = path.parent / ref
            try:
                topo = resolve_topology(str(candidate) if exists(candidate) else ref)
            except InputError as err:
                raise relocate(err, str(path), index.line_of, f"{where}.hardware") from None
            hardware = InferredHardware(topo, f"pool {pool.name!r} of {path}: {ref}", True)
        reserved = _cpu_milli(pool.reserved_cpu, f"{path}: {where}.reservedCPU")
        out.append(
            PoolConfig(
                pool.name,
                pool.selector.to_selector(),
                hardware,
                pool.kubelet,
                reserved,
                f"pool {pool.name!r} of {path}",
            )
        )
    return tuple(out)


# KubeletConfiguration fields whose Go type is a map (kubelet/config/v1beta1/types.go).
_MAP_FIELDS = (
    "kubeReserved",
    "systemReserved",
    "evictionHard",
    "evictionSoft",
    "evictionSoftGracePeriod",
    "evictionMinimumReclaim",
    "featureGates",
)


def read_kubelet_config(path: Path) -> tuple[KubeletSection, int, tuple[str, ...]]:
    """(the modelled fields, kubeReserved + systemReserved cpu in milli, notes)."""
    data, index = _read(path, f"a {KUBELET_KIND} ({KUBELET_API})")
    kind, api = data.get("kind"), data.get("apiVersion")
    if kind != KUBELET_KIND or api != KUBELET_API:
        raise InputError(
            f"kind {kind!r}, apiVersion {api!r}",
            expected=f"kind: {KUBELET_KIND}, apiVersion: {KUBELET_API}",
            location=Location(str(path), 1),
        )
    for key in _MAP_FIELDS:
        if data.get(key) is not None and not isinstance(data[key], dict):
            # kubelet's decoder refuses these even when it falls back to lenient decoding.
            raise InputError(
                f"found {type(data[key]).__name__}",
                expected="a mapping (resource name or signal: value)",
                location=Location(str(path), index.line_of(key), key),
            )
    modelled = {k: v for k, v in data.items() if k in _MODELLED}
    ignored = sorted(
        k
        for k in data
        if k not in _MODELLED and k not in ("kind", "apiVersion", "kubeReserved", "systemReserved")
    )
    section = _validated(KubeletSection, modelled, path, index)
    milli = sum(
        _cpu_milli(
            (data.get(k) or {}).get("cpu") if isinstance(data.get(k), dict) else None,
            f"{path}: {k}.cpu",
        )
        for k in ("kubeReserved", "systemReserved")
    )
    notes = (f"{path}: fields not modelled by fit: {', '.join(ignored)}",) if ignored else ()
    return section, milli, notes


def node_defaults(pools: Path | None, kubelet_config: Path | None) -> NodeDefaults:
    """What ``--pools`` and ``--kubelet-config`` say, read and checked."""
    pool_list = read_pools(pools) if pools is not None else ()
    if kubelet_config is None:
        return NodeDefaults(pool_list)
    section, reserved, notes = read_kubelet_config(kubelet_config)
    return NodeDefaults(pool_list, section, reserved, f"--kubelet-config {kubelet_config}", notes)
