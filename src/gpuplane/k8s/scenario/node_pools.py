"""Node pools -> ``NodePoolSpec`` with the allocatable the kubelet would report.

Node allocatable = capacity - kube-reserved - system-reserved - the hard eviction threshold,
floored at zero (kubelet ``pkg/kubelet/cm/node_container_manager_linux.go``,
GetNodeAllocatableAbsolute; only ``memory.available`` of ``--eviction-hard`` is taken off memory,
and the kubelet's default ``--eviction-hard`` holds ``memory.available<100Mi``). Capacity comes
from the topology: CPUs listed in the CPU NUMA nodes (logical CPUs, as cAdvisor counts them) and
the memory of those nodes. GPU-memory NUMA nodes (GH200) are left out; a pool whose topology does
not list every CPU or memory size must say ``allocatable:`` itself.

``--kube-reserved`` / ``--system-reserved`` accept ``cpu``, ``memory``, ``ephemeral-storage`` and
``pid`` (kubelet ``parseResourceList``: anything else "cannot reserve", negatives refused), written
as the flag takes them (``cpu=500m,memory=1Gi``) or as a mapping.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gpuplane.api.quantity import EXPECTED, Quantity
from gpuplane.api.resources import CPU, MEMORY, PODS
from gpuplane.api.taints import Taint
from gpuplane.api.validation import invalid, label_value_errors, qualified_name_errors
from gpuplane.core.cpuset import format_cpu_list, parse_cpu_list
from gpuplane.core.errors import InputError
from gpuplane.k8s.field_errors import LineOf, fail, relocate
from gpuplane.k8s.manifests.labels import check_labels
from gpuplane.k8s.manifests.quantity import parse_manifest_quantity
from gpuplane.k8s.manifests.resources import canonical_amount
from gpuplane.k8s.scenario.files import pool_topology_ref
from gpuplane.kubelet.admission import node_state
from gpuplane.kubelet.config import KubeletConfig
from gpuplane.kubelet.cpu_manager import allocate_cpus
from gpuplane.slicing.mig.node_devices import layouts_from_config
from gpuplane.slicing.sharing.config import device_plugin_config_from_dict
from gpuplane.topology.gfd import gfd_labels
from gpuplane.topology.model import NodeTopology
from gpuplane.topology.resolve import HARDWARE_SUFFIXES, resolve_topology
from gpuplane.twin.scenario.mig import MigPoolSpec
from gpuplane.twin.scenario.schema import ControlPlane, NodePool, QuantityText
from gpuplane.twin.scenario.spec import NodePoolSpec

_HARDWARE = tuple(HARDWARE_SUFFIXES) + tuple(s.upper() for s in HARDWARE_SUFFIXES)
RESERVABLE = ("cpu", "memory", "ephemeral-storage", "pid")
# The node labels the kubelet and the twin put on every node (``kubernetes.io/hostname``...).
NODE_LABELS_SET_BY_TWIN = frozenset(
    {"kubernetes.io/hostname", "kubernetes.io/os", "gpuplane.io/node-pool"}
)
EVICTION_SIGNALS = (
    "memory.available",
    "nodefs.available",
    "nodefs.inodesFree",
    "imagefs.available",
    "imagefs.inodesFree",
    "containerfs.available",
    "containerfs.inodesFree",
    "pid.available",
)


def _flag_pairs(value: str, sep: str, field: str, example: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in value.split(","))):
        key, found, amount = part.partition(sep)
        if not found or not key.strip() or not amount.strip():
            raise fail(f"{part!r} is not key{sep}value", field, f"a list like {example}")
        out[key.strip()] = amount.strip()
    return out


def _quantity(value: object, field: str) -> Quantity:
    try:
        return parse_manifest_quantity(value)
    except InputError as err:
        raise fail(err.problem, field, err.expected) from None


def _amount(value: object, field: str, *, milli: bool) -> int:
    """The integer (or thousandths) of a quantity, too-large values named at ``field``."""
    quantity = _quantity(value, field)
    try:
        return quantity.milli_value() if milli else quantity.value()
    except ValueError:
        raise fail(
            f"{quantity.text!r} is too large",
            field,
            "at most 2^63-1 " + ("millicores" if milli else "bytes"),
        ) from None


def parse_reserved(value: Mapping[str, QuantityText] | str, field: str) -> dict[str, int]:
    """kubelet --kube-reserved / --system-reserved -> canonical integers."""
    pairs: Mapping[str, object] = (
        _flag_pairs(value, "=", field, "cpu=500m,memory=1Gi") if isinstance(value, str) else value
    )
    out: dict[str, int] = {}
    for name, raw in pairs.items():
        where = f"{field}.{name}"
        if name not in RESERVABLE:
            raise fail(f"cannot reserve {name!r} resource", where, ", ".join(RESERVABLE))
        quantity = _quantity(raw, where)
        if quantity.sign() < 0:
            raise fail(f"resource quantity for {name!r} cannot be negative", where)
        try:
            out[name] = canonical_amount(name, quantity)
        except ValueError:
            raise fail(f"{quantity.text!r} is too large", where, EXPECTED) from None
    return out


def eviction_memory_bytes(value: Mapping[str, str] | str, capacity: int, field: str) -> int:
    """The ``memory.available`` hard threshold in bytes (a quantity or a percent of capacity)."""
    pairs = (
        _flag_pairs(value, "<", field, "memory.available<100Mi")
        if isinstance(value, str)
        else dict(value)
    )
    for signal in pairs:
        if signal not in EVICTION_SIGNALS:
            raise fail(
                f"unknown eviction signal {signal!r}",
                f"{field}.{signal}",
                ", ".join(EVICTION_SIGNALS),
            )
    threshold = pairs.get("memory.available")
    if threshold is None:
        return 0
    where = f"{field}.memory.available"
    if threshold.endswith("%"):
        try:
            percent = float(threshold[:-1])
        except ValueError:
            percent = -1.0
        if not 0 <= percent <= 100:
            raise fail(f"{threshold!r} is not a percentage", where, "e.g. 5%")
        return int(capacity * percent / 100)
    quantity = _quantity(threshold, where)
    if quantity.sign() < 0:
        raise fail(f"{threshold!r} cannot be negative", where)
    return _amount(threshold, where, milli=False)


def _capacity(topology: NodeTopology) -> tuple[int | None, int | None]:
    """(cpu millicores, memory bytes) the topology shows for the whole node, None if partial."""
    numa = topology.cpu_numa_nodes()
    cpus = None if not numa or any(not n.cpus for n in numa) else sum(len(n.cpus) for n in numa)
    known = numa and all(n.memory_bytes is not None for n in numa)
    memory = sum(n.memory_bytes or 0 for n in numa) if known else None
    return (None if cpus is None else cpus * 1000), memory


def _allocatable(
    pool: NodePool, topology: NodeTopology, control: ControlPlane, path: str
) -> dict[str, int]:
    cp_path = "control_plane"
    reserved = parse_reserved(control.kube_reserved, f"{cp_path}.kube_reserved")
    for name, amount in parse_reserved(
        control.system_reserved, f"{cp_path}.system_reserved"
    ).items():
        reserved[name] = reserved.get(name, 0) + amount
    eviction_memory_bytes(control.eviction_hard, 0, f"{cp_path}.eviction_hard")  # check early
    override = pool.allocatable
    cpu_cap, mem_cap = _capacity(topology)
    out: dict[str, int] = {
        PODS: (override.pods if override and override.pods else control.max_pods)
    }
    if override is not None and override.cpu is not None:
        out[CPU] = _amount(override.cpu, f"{path}.allocatable.cpu", milli=True)
    elif cpu_cap is None:
        raise fail(
            f"topology {topology.name!r} does not list every CPU of the node",
            path,
            "allocatable.cpu (e.g. allocatable: {cpu: 96, memory: 1000Gi})",
        )
    else:
        out[CPU] = max(cpu_cap - reserved.get(CPU, 0), 0)
    if override is not None and override.memory is not None:
        out[MEMORY] = _amount(override.memory, f"{path}.allocatable.memory", milli=False)
    elif mem_cap is None:
        raise fail(
            f"topology {topology.name!r} does not give the memory of every NUMA node",
            path,
            "allocatable.memory (e.g. allocatable: {memory: 1000Gi})",
        )
    else:
        evict = eviction_memory_bytes(control.eviction_hard, mem_cap, f"{cp_path}.eviction_hard")
        out[MEMORY] = max(mem_cap - reserved.get(MEMORY, 0) - evict, 0)
    for name, cap in ((CPU, cpu_cap), (MEMORY, mem_cap)):
        if out[name] > 0:
            continue
        overridden = override is not None and getattr(override, name) is not None
        if overridden or cap is None:
            raise fail(f"no allocatable {name} left", f"{path}.allocatable.{name}", f"{name} > 0")
        # Derived from capacity: what was taken off is to blame, not the pool.
        blame = (
            "kube_reserved"
            if name in parse_reserved(control.kube_reserved, "")
            else (
                "system_reserved" if name in parse_reserved(control.system_reserved, "") else None
            )
        )
        field = f"{cp_path}.{blame}.{name}" if blame else f"{cp_path}.eviction_hard"
        shown = f"{cap // 1000} CPUs" if name == CPU else f"{cap} bytes"
        raise fail(
            f"reserving {reserved.get(name, 0)}{'m' if name == CPU else ''} {name} leaves "
            f"nothing allocatable on {path} ({pool.name}: {shown})",
            field,
            f"kube_reserved + system_reserved {name} below the node's capacity",
        )
    return out


def node_pool_spec(
    pool: NodePool,
    index: int,
    scenario_path: Path,
    control: ControlPlane,
    line_of: LineOf,
) -> NodePoolSpec:
    """One pool with its topology resolved and its allocatable computed."""
    path = f"node_pools[{index}]"
    source = str(scenario_path)
    ref_field = f"{path}.preset" if pool.preset is not None else f"{path}.topology_file"
    ref = pool_topology_ref(pool, scenario_path)
    if pool.gpu_model is not None and (pool.preset is not None or ref.endswith(_HARDWARE)):
        raise relocate(
            fail(
                "gpu_model only applies to saved `nvidia-smi topo -m` output",
                f"{path}.gpu_model",
                "no gpu_model (presets and hardware YAML files name their GPU model)",
            ),
            source,
            line_of,
        )
    try:
        topology = resolve_topology(ref, gpu_model=pool.gpu_model)
    except InputError as err:
        raise relocate(err, source, line_of, ref_field) from None
    try:
        check_pool_labels(pool, topology, path)
    except InputError as err:
        raise relocate(err, source, line_of) from None
    try:
        allocatable = _allocatable(pool, topology, control, path)
        kubelet = kubelet_config(pool, topology, control, path)
    except InputError as err:
        raise relocate(err, source, line_of) from None
    mig = None
    if pool.mig is not None:
        try:
            layouts = layouts_from_config(topology, pool.mig.config)
        except InputError as err:
            raise relocate(err, source, line_of, f"{path}.mig.config") from None
        mig = MigPoolSpec(
            strategy=pool.mig.strategy,
            config=pool.mig.config,
            dynamic=pool.mig.dynamic,
            reconfigure_s=pool.mig.reconfigure_seconds,
            interval_s=pool.mig.interval_seconds,
            max_unavailable=pool.mig.max_unavailable,
            allow_evict=pool.mig.allow_evict,
            layouts=layouts,
        )
    device_plugin = None
    if pool.device_plugin is not None:
        try:
            device_plugin = device_plugin_config_from_dict(pool.device_plugin)
        except InputError as err:
            raise relocate(err, source, line_of, f"{path}.device_plugin") from None
    if pool.kubelet.reserved_system_cpus is not None and (
        pool.allocatable is None or pool.allocatable.cpu is None
    ):
        # reservedSystemCPUs replaces the kube/system-reserved cpu in the node's allocatable.
        cpu_cap = _capacity(topology)[0] or 0
        allocatable[CPU] = max(cpu_cap - 1000 * len(kubelet.reserved_cpus), 0)
    return NodePoolSpec(
        name=pool.name,
        topology=topology,
        count=pool.count,
        labels=dict(pool.labels),
        taints=tuple(Taint(key=t.key, value=t.value, effect=t.effect) for t in pool.taints),
        allocatable=allocatable,
        kubelet=kubelet,
        device_plugin=device_plugin,
        mig=mig,
        dra=pool.dra,
    )


def check_pool_labels(pool: NodePool, topology: NodeTopology, path: str) -> None:
    """The pool's labels and taints as the API server checks a Node's (``ValidateLabels``,
    ``validateNodeTaints``: qualified-name keys, label values), and no label GPU Feature
    Discovery sets on the node itself (GFD would overwrite it)."""
    check_labels(pool.labels, f"{path}.labels")
    gfd = gfd_labels(topology, machine=topology.machine)
    for key in pool.labels:
        if key in gfd or key in NODE_LABELS_SET_BY_TWIN:
            owner = "GPU Feature Discovery" if key in gfd else "the kubelet and gpuplane"
            raise fail(
                f"label {key!r} is set by {owner} on every node of the pool",
                f"{path}.labels.{key}",
                "labels outside the keys GFD and the kubelet manage",
            )
    for i, taint in enumerate(pool.taints):
        where = f"{path}.taints[{i}]"
        for problem in qualified_name_errors(taint.key):
            raise fail(invalid(taint.key, problem), f"{where}.key")
        for problem in label_value_errors(taint.value):
            raise fail(invalid(taint.value, problem), f"{where}.value")
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(pool.taints):
        if (taint.key, taint.effect) in seen:
            raise fail(
                f"taints must be unique by key and effect pair: {taint.key}:{taint.effect}",
                f"{path}.taints[{i}]",
            )
        seen.add((taint.key, taint.effect))


def kubelet_config(
    pool: NodePool, topology: NodeTopology, control: ControlPlane, path: str
) -> KubeletConfig:
    """The pool's KubeletConfiguration with its reserved CPUs resolved as the kubelet does.

    ``reservedSystemCPUs`` names them; otherwise the static CPU manager reserves
    ceil(kube-reserved + system-reserved cpu) CPUs, whole cores from the lowest ids first
    (cpumanager policy_static.go takeByTopology), and refuses to start when that is zero.
    """
    section = pool.kubelet
    where = f"{path}.kubelet"
    known = {c for n in topology.cpu_numa_nodes() for c in n.cpus}
    if section.reserved_system_cpus is not None:
        ids = frozenset(parse_cpu_list(section.reserved_system_cpus))
        stray = sorted(ids - known)
        if stray:
            raise fail(
                f"reservedSystemCPUs {stray} are not CPUs of {topology.name}",
                f"{where}.reservedSystemCPUs",
                f"ids among {format_cpu_list(sorted(known))}",
            )
        return section.config(ids)
    if section.cpu_manager_policy != "static":
        return section.config(frozenset())
    reserved = parse_reserved(control.kube_reserved, "control_plane.kube_reserved").get(CPU, 0)
    reserved += parse_reserved(control.system_reserved, "control_plane.system_reserved").get(CPU, 0)
    count = -(-reserved // 1000)
    if count == 0:
        raise fail(
            "the static CPU manager requires systemreserved.cpu + kubereserved.cpu to be greater "
            "than zero",
            f"{where}.cpuManagerPolicy",
            "control_plane.kube_reserved/system_reserved cpu > 0, or kubelet.reservedSystemCPUs",
        )
    cpu_topo = node_state(topology, cpu_manager_static=True).cpu_topology
    chosen = allocate_cpus(cpu_topo, count, (), None) if cpu_topo is not None else None
    if chosen is None:
        raise fail(f"cannot reserve {count} CPUs on {topology.name}", f"{where}.cpuManagerPolicy")
    return section.config(frozenset(chosen))
