"""Cross-checks of a node hardware description that a field-by-field schema cannot express.

Broken references (an unknown parent bridge, a cycle of switches, duplicate ids, a gap in the GPU
indices, NUMA ids that do not exist) and numbers that cannot all be true at once (CPU counts, a
NUMA distance matrix that is not an ACPI SLIT, more NVLinks than the GPU has). Each check raises
an InputError whose location names the field path (``gpus[3].parent``);
``hardware_spec.load_hardware_spec`` adds the file and the line.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from gpuplane.core.cpuset import parse_cpu_list
from gpuplane.core.errors import InputError, Location
from gpuplane.topology.catalog import GpuModel, default_catalog

if TYPE_CHECKING:
    from gpuplane.topology.hardware_spec import BridgeSpec, GpuSpec, HardwareSpec

# ACPI SLIT: a node's distance to itself is normalised to 10; 255 means unreachable.
LOCAL_DISTANCE = 10


def check_hardware_spec(spec: HardwareSpec) -> None:
    """Raise InputError (with a field path) at the first inconsistency in ``spec``."""
    _check_numa(spec)
    _check_distances(spec)
    _check_bridges(spec)
    _check_gpus(spec)
    _check_nics(spec)
    _check_nvlink(spec)


def _fail(field: str, problem: str, expected: str | None = None) -> InputError:
    return InputError(problem, expected=expected, location=Location(field=field))


def _names(values: list[str], limit: int = 12) -> str:
    shown = ", ".join(values[:limit])
    return shown + (f" (and {len(values) - limit} more)" if len(values) > limit else "")


def _check_numa(spec: HardwareSpec) -> None:
    seen: dict[int, int] = {}
    owner: dict[int, int] = {}
    for i, node in enumerate(spec.numa_nodes):
        where = f"numa_nodes[{i}]"
        if node.id in seen:
            raise _fail(f"{where}.id", f"NUMA id {node.id} is also numa_nodes[{seen[node.id]}]")
        seen[node.id] = i
        if node.socket >= spec.cpu.sockets:
            raise _fail(f"{where}.socket", f"socket {node.socket}", f"0..{spec.cpu.sockets - 1}")
        try:
            cpus = parse_cpu_list(node.cpus)
        except InputError as err:
            raise _fail(f"{where}.cpus", err.problem, err.expected) from None
        if node.kind == "cpu" and not cpus:
            raise _fail(
                f"{where}.cpus", "a cpu NUMA node lists no CPUs", "a list like 0-55,112-167"
            )
        if node.kind == "gpu-memory" and cpus:
            raise _fail(f"{where}.cpus", "a gpu-memory NUMA node has no CPUs", "no cpus")
        for cpu in cpus:
            if cpu in owner:
                raise _fail(f"{where}.cpus", f"CPU {cpu} is also in numa_nodes[{owner[cpu]}]")
            owner[cpu] = i
    expected = spec.cpu.sockets * spec.cpu.cores_per_socket * spec.cpu.threads_per_core
    if len(owner) != expected:
        raise _fail(
            "cpu",
            f"numa_nodes list {len(owner)} CPUs but cpu gives {spec.cpu.sockets} sockets x "
            f"{spec.cpu.cores_per_socket} cores x {spec.cpu.threads_per_core} threads = {expected}",
            "the cpu-lists to cover every logical CPU once",
        )


def _check_distances(spec: HardwareSpec) -> None:
    matrix = spec.numa_distances
    if matrix is None:
        return
    n = len(spec.numa_nodes)
    if len(matrix) != n:
        raise _fail("numa_distances", f"{len(matrix)} rows", f"{n}, one per NUMA node")
    for i, row in enumerate(matrix):
        if len(row) != n:
            raise _fail(f"numa_distances[{i}]", f"{len(row)} values", f"{n}, one per NUMA node")
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            where = f"numa_distances[{i}][{j}]"
            if i == j and value != LOCAL_DISTANCE:
                raise _fail(where, f"local distance {value}", f"{LOCAL_DISTANCE} (ACPI SLIT)")
            if i != j and not LOCAL_DISTANCE <= value <= 255:
                raise _fail(where, f"distance {value}", "10..255 (ACPI SLIT)")
            if value != matrix[j][i]:
                raise _fail(
                    where, f"{value} but [{j}][{i}] is {matrix[j][i]}", "a symmetric matrix"
                )


def _check_bridges(spec: HardwareSpec) -> None:
    numa = spec.numa_by_id()
    index: dict[str, int] = {}
    for i, br in enumerate(spec.bridges):
        where = f"bridges[{i}]"
        if br.id in index:
            raise _fail(f"{where}.id", f"bridge id {br.id!r} is also bridges[{index[br.id]}]")
        index[br.id] = i
        if br.kind == "host-bridge":
            if br.parent is not None or br.pcie is not None:
                field = "parent" if br.parent is not None else "pcie"
                raise _fail(
                    f"{where}.{field}", "a host bridge is the root of its tree", "no " + field
                )
            if br.numa is None:
                raise _fail(where, "host bridge without 'numa'", "numa: <NUMA node id>")
            if br.numa not in numa or numa[br.numa].kind != "cpu":
                cpu_ids = [str(k) for k, v in numa.items() if v.kind == "cpu"]
                raise _fail(
                    f"{where}.numa",
                    f"NUMA {br.numa} is not a cpu NUMA node",
                    f"one of {_names(cpu_ids)}",
                )
        else:
            if br.numa is not None:
                raise _fail(
                    f"{where}.numa",
                    "a switch takes its NUMA node from its host bridge",
                    "no numa on switches",
                )
            if br.parent is None:
                raise _fail(where, "switch without 'parent'", "parent: <bridge id>")
            if br.pcie is None and spec.pcie is None:
                raise _fail(
                    where,
                    "switch uplink has no PCIe link",
                    "pcie: {gen, width} here or at the top level",
                )
    by_id = spec.bridge_by_id()
    for i, br in enumerate(spec.bridges):
        _check_ancestry(i, br, by_id)


def _check_ancestry(i: int, br: BridgeSpec, by_id: dict[str, BridgeSpec]) -> None:
    path = [br.id]
    cur = br
    while cur.parent is not None:
        if cur.parent not in by_id:
            raise _fail(
                f"bridges[{i}].parent",
                f"unknown bridge {cur.parent!r}",
                f"one of {_names(list(by_id))}",
            )
        if cur.parent in path:
            cycle = " -> ".join([*path, cur.parent])
            raise _fail(
                f"bridges[{i}].parent",
                f"bridges form a cycle: {cycle}",
                "every switch to lead up to a host bridge",
            )
        path.append(cur.parent)
        cur = by_id[cur.parent]


def _check_parent(field: str, parent: str, spec: HardwareSpec) -> None:
    if parent not in spec.bridge_by_id():
        ids = [b.id for b in spec.bridges]
        raise _fail(
            field,
            f"unknown bridge {parent!r}",
            f"one of {_names(ids)}" if ids else "a bridge listed under 'bridges'",
        )


def _model(spec: HardwareSpec, gpu: GpuSpec, field: str) -> GpuModel:
    try:
        return spec.model_of(gpu)
    except InputError as err:
        raise _fail(field, err.problem, err.expected) from None


def _check_gpus(spec: HardwareSpec) -> None:
    try:
        default_catalog().get(spec.gpu_model)
    except InputError as err:
        raise _fail("gpu_model", err.problem, err.expected) from None
    positions: dict[int, int] = {}
    for i, gpu in enumerate(spec.gpus):
        where = f"gpus[{i}]"
        if gpu.index in positions:
            raise _fail(
                f"{where}.index", f"GPU index {gpu.index} is also gpus[{positions[gpu.index]}]"
            )
        positions[gpu.index] = i
        _check_parent(f"{where}.parent", gpu.parent, spec)
        model = _model(spec, gpu, f"{where}.model")
        if gpu.memory_numa is not None:
            node = spec.numa_by_id().get(gpu.memory_numa)
            if node is None or node.kind != "gpu-memory":
                raise _fail(
                    f"{where}.memory_numa",
                    f"NUMA {gpu.memory_numa} is not gpu-memory",
                    "the id of a numa_nodes entry with kind: gpu-memory",
                )
        if gpu.host_link == "c2c":
            if model.c2c_gbps_bidir is None:
                raise _fail(f"{where}.host_link", f"{model.name} has no NVLink-C2C", "pcie")
            if spec.bridge_by_id()[gpu.parent].kind != "host-bridge" or gpu.pcie is not None:
                raise _fail(
                    f"{where}.host_link",
                    "a C2C GPU sits on a host bridge, without pcie",
                    "parent: <host bridge id> and no pcie override",
                )
    for expect, index in enumerate(sorted(positions)):
        if index != expect:
            raise _fail(
                f"gpus[{positions[index]}].index",
                f"GPU indices skip {expect}",
                f"indices 0..{len(positions) - 1} with no gaps",
            )


def _check_nics(spec: HardwareSpec) -> None:
    names: dict[str, int] = {}
    for i, nic in enumerate(spec.nics):
        if nic.name in names:
            raise _fail(f"nics[{i}].name", f"NIC {nic.name!r} is also nics[{names[nic.name]}]")
        names[nic.name] = i
        _check_parent(f"nics[{i}].parent", nic.parent, spec)
        if nic.pcie is None and spec.pcie is None:
            raise _fail(
                f"nics[{i}]", "NIC has no PCIe link", "pcie: {gen, width} here or top-level"
            )


def _check_nvlink(spec: HardwareSpec) -> None:
    fabric, pairs = spec.nvlink.fabric, spec.nvlink.pairs
    if fabric != "mesh" and pairs:
        raise _fail("nvlink.pairs", f"pairs given for fabric {fabric!r}", "pairs only with mesh")
    if fabric == "none":
        return
    models = {g.index: spec.model_of(g) for g in spec.gpus}
    for i, gpu in enumerate(spec.gpus):
        if models[gpu.index].nvlink is None:
            raise _fail(
                f"gpus[{i}]",
                f"{models[gpu.index].name} has no NVLink",
                "an NVLink GPU model, or nvlink fabric none",
            )
    if fabric == "nvswitch":
        return
    if not pairs:
        raise _fail("nvlink.pairs", "a mesh without pairs", "[[gpu_a, gpu_b, links], ...]")
    used: Counter[int] = Counter()
    seen: dict[tuple[int, int], int] = {}
    for k, pair in enumerate(pairs):
        where = f"nvlink.pairs[{k}]"
        if len(pair) != 3:
            raise _fail(where, f"{len(pair)} numbers", "[gpu_a, gpu_b, bonded link count]")
        a, b, count = pair
        for pos, end in ((0, a), (1, b)):
            if end not in models:
                raise _fail(f"{where}[{pos}]", f"no GPU {end}", f"0..{len(models) - 1}")
        key = (min(a, b), max(a, b))
        if a == b or count < 1:
            raise _fail(where, f"{pair}", "two different GPUs and at least one link")
        if key in seen:
            raise _fail(where, f"GPUs {a} and {b} are also nvlink.pairs[{seen[key]}]")
        seen[key] = k
        used.update({a: count, b: count})
    for index, total in sorted(used.items()):
        nv = models[index].nvlink
        if nv is not None and total > nv.num_links:
            raise _fail(
                "nvlink.pairs",
                f"GPU {index} uses {total} NVLinks",
                f"at most {nv.num_links} ({models[index].name})",
            )
