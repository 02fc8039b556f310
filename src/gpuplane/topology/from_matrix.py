"""Build a :class:`NodeTopology` from a parsed ``nvidia-smi topo -m`` matrix.

The matrix gives link classes and affinities only. What it lacks is filled in by stated rules,
and every guess is written to ``NodeTopology.notes`` so the CLI can show it:

- GPU model: the caller's, else a fallback read off the NVLink counts (:data:`FALLBACK_MODELS`).
- A GPU's NUMA node: the first id of its NUMA Affinity; else GPUs grouped by CPU Affinity; else
  the node of a placed GPU it reaches without SYS; else 0.
- A NIC's NUMA node: that of the GPU(s) with the nearest non-SYS path; None if SYS to all.
- Bandwidth per pair: :class:`BandwidthModel` from the GPU model's NVLink and PCIe rates.
"""

from __future__ import annotations

import pathlib
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from gpuplane.core.errors import InputError, Location
from gpuplane.core.ids import GpuIndex, GpuModelName, NicIndex, NumaId
from gpuplane.core.textio import decode_text
from gpuplane.topology.bandwidth import BandwidthModel
from gpuplane.topology.catalog import GpuModel, get_gpu_model
from gpuplane.topology.links import Link, LinkClass
from gpuplane.topology.model import Gpu, Nic, NodeTopology, NumaKind, NumaNode
from gpuplane.topology.smi_parser import TopoMatrix, parse_topo_text

_SYS_RANK = Link(LinkClass.SYS).rank
# NVSwitch systems print the GPU's full link count for every pair; direct meshes print fewer.
_MIN_NVSWITCH_LINKS = 12


@dataclass(frozen=True, slots=True)
class FallbackModel:
    """A fallback rule: ``model`` is assumed when ``matches(nv_counts, has_gpu_numa_ids)``."""

    model: str
    reason: str
    matches: Callable[[frozenset[int], bool], bool]


# First match wins. Counts alone cannot tell H100 from H200 or B200 (all NV18), which is why the
# caller is told to pass --gpu-model; the per-link rate only differs for NVLink 5 (B200).
FALLBACK_MODELS: tuple[FallbackModel, ...] = (
    FallbackModel("H100-80GB-SXM", "from NV18", lambda nv, _: 18 in nv),
    FallbackModel("A100-SXM4-80GB", "from NV12", lambda nv, _: 12 in nv),
    FallbackModel("GH200-96GB", "from NV6 with GPU NUMA IDs", lambda nv, mem: 6 in nv and mem),
    FallbackModel("V100-SXM2-16GB", "from NV1/NV2", lambda nv, _: bool(nv & {1, 2})),
    FallbackModel("L40S", "as no GPU pair has NVLink", lambda nv, _: not nv),
    FallbackModel("H100-80GB-SXM", "as its NVLink counts are not in the table", lambda nv, _: True),
)


def topology_from_matrix(
    m: TopoMatrix, *, name: str | None = None, gpu_model: str | None = None
) -> NodeTopology:
    """The node a ``topo -m`` matrix describes; InputError (located in the file) if it cannot be."""
    gpus_pos = _gpu_order(m)
    order = [*gpus_pos, *m.nic_positions]
    model, notes = _resolve_model(m, gpus_pos, gpu_model)
    _check_nvlink(m, gpus_pos, model, notes)
    gpu_numa = _gpu_numa(m, gpus_pos, notes)
    nic_numa = [_nic_numa(m, nic, gpus_pos, gpu_numa, notes) for nic in m.nic_positions]
    links = tuple(tuple(m.cells[a][b] for b in order) for a in order)
    bw = BandwidthModel(model.nvlink_gbps_per_link, model.pcie_gbps)
    gpus = tuple(_make_gpu(m, k, pos, model, gpu_numa[k]) for k, pos in enumerate(gpus_pos))
    nics = tuple(
        Nic(index=NicIndex(k), name=m.nic_name(pos), numa=_numa_or_none(nic_numa[k]))
        for k, pos in enumerate(m.nic_positions)
    )
    return NodeTopology(
        name=name if name is not None else pathlib.Path(m.source).stem,
        gpus=gpus,
        nics=nics,
        numa_nodes=_numa_nodes(m, gpus_pos, gpus),
        links=links,
        bandwidth_gbps=tuple(tuple(bw.for_link(c) for c in row) for row in links),
        nvswitch=_is_nvswitch(m, gpus_pos),
        source=f"file:{m.source}",
        description=f"parsed from nvidia-smi topo -m output ({m.source})",
        notes=(*notes, *_repair_notes(m)),
    )


# nvidia-smi prints text: tabs, spaces, line ends (and ESC, for a capture of the colours);
# anything else below 0x20 is damage.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]")


def load_topology_text_file(path: pathlib.Path, *, gpu_model: str | None = None) -> NodeTopology:
    """Read a saved ``nvidia-smi topo -m`` output and build its node."""
    where = Location(source=str(path))
    try:
        data = path.read_bytes()
    except OSError as err:
        raise InputError(f"cannot read the file: {err.strerror or err}", location=where) from None
    text = decode_text(data, str(path)).removeprefix("\ufeff")
    control = _CONTROL.search(text)
    if control is not None:
        at = control.start()
        raise InputError(
            f"control character {control.group()!r} at column {at - text.rfind(chr(10), 0, at)}",
            expected="the text nvidia-smi topo -m prints",
            location=Location(str(path), text.count("\n", 0, at) + 1),
        )
    return topology_from_matrix(parse_topo_text(text, str(path)), gpu_model=gpu_model)


def _fail(m: TopoMatrix, line: int, field: str | None, problem: str, expected: str) -> InputError:
    return InputError(problem, expected=expected, location=Location(m.source, line, field))


def _repair_notes(m: TopoMatrix) -> list[str]:
    if not m.repairs:
        return []
    return [f"{len(m.repairs)} cell(s) glued in the paste were split: {'; '.join(m.repairs)}"]


def _numa_or_none(numa: int | None) -> NumaId | None:
    return NumaId(numa) if numa is not None else None


# ----- devices and model -----
def _gpu_order(m: TopoMatrix) -> list[int]:
    """GPU columns sorted by index, which must run 0..n-1 as NodeTopology numbers them."""
    positions = sorted(m.gpu_positions, key=m.gpu_index)
    indices = [m.gpu_index(p) for p in positions]
    if indices != list(range(len(indices))):
        names = ", ".join(m.device_names[p] for p in positions)
        expected = f"GPU0..GPU{len(indices) - 1}, each once"
        raise _fail(m, m.header_line, None, f"GPU columns are {names}", expected)
    return positions


def _gpu_nv_counts(m: TopoMatrix, gpus_pos: list[int]) -> frozenset[int]:
    return frozenset(
        m.cells[a][b].num_nvlinks for a in gpus_pos for b in gpus_pos if m.cells[a][b].is_nvlink
    )


def _resolve_model(
    m: TopoMatrix, gpus_pos: list[int], gpu_model: str | None
) -> tuple[GpuModel, list[str]]:
    if gpu_model is not None:
        return get_gpu_model(gpu_model), []
    counts = _gpu_nv_counts(m, gpus_pos)
    has_memory_numa = any(m.gpu_numa_id[p] is not None for p in gpus_pos)
    rule = next(r for r in FALLBACK_MODELS if r.matches(counts, has_memory_numa))
    note = f"GPU model not given; assumed {rule.model} {rule.reason}; pass --gpu-model"
    return get_gpu_model(rule.model), [note]


def _check_nvlink(m: TopoMatrix, gpus_pos: list[int], model: GpuModel, notes: list[str]) -> None:
    """NVLink cells must be possible for the model; more links than it has only earn a note."""
    counts = _gpu_nv_counts(m, gpus_pos)
    if not counts:
        return
    if model.nvlink is None:
        a, b = next((a, b) for a in gpus_pos for b in gpus_pos if m.cells[a][b].is_nvlink)
        problem = (
            f"{m.device_names[a]} to {m.device_names[b]} is {m.cells[a][b].label}, "
            f"but {model.name} has no NVLink"
        )
        raise _fail(m, m.row_lines[a], m.device_names[b], problem, "the node's GPU model")
    if max(counts) > model.nvlink.num_links:
        notes.append(
            f"NV{max(counts)} is more than the {model.nvlink.num_links} NVLinks of {model.name}; "
            "bandwidth uses the printed count"
        )


def _is_nvswitch(m: TopoMatrix, gpus_pos: list[int]) -> bool:
    pairs = [m.cells[a][b] for a in gpus_pos for b in gpus_pos if a != b]
    counts = {cell.num_nvlinks for cell in pairs}
    return (
        bool(pairs)
        and all(cell.is_nvlink for cell in pairs)
        and len(counts) == 1
        and min(counts) >= _MIN_NVSWITCH_LINKS
    )


def _make_gpu(m: TopoMatrix, index: int, pos: int, model: GpuModel, numa: int) -> Gpu:
    printed = m.numa_ids(pos)
    return Gpu(
        index=GpuIndex(index),
        model=GpuModelName(model.name),
        numa=NumaId(numa),
        numa_affinity=tuple(NumaId(n) for n in printed) if printed else (NumaId(numa),),
        cpu_affinity=m.cpu_ids(pos),
        memory_numa=_numa_or_none(m.memory_numa(pos)),
        pcie_gbps=model.pcie_gbps,
    )


# ----- NUMA -----
def _gpu_numa(m: TopoMatrix, gpus_pos: list[int], notes: list[str]) -> list[int]:
    """One NUMA node per GPU (in GPU order), by the rules in the module docstring."""
    numa: list[int | None] = [m.first_numa(p) for p in gpus_pos]
    _numa_from_cpu_groups(m, gpus_pos, numa, notes)
    _numa_from_neighbours(m, gpus_pos, numa, notes)
    unplaced = [m.device_names[p] for p, n in zip(gpus_pos, numa, strict=True) if n is None]
    if unplaced:
        notes.append(
            f"{', '.join(unplaced)}: no CPU or NUMA affinity printed and no placed GPU reachable "
            "without SYS; assumed NUMA 0"
        )
    return [n if n is not None else 0 for n in numa]


def _numa_from_cpu_groups(
    m: TopoMatrix, gpus_pos: list[int], numa: list[int | None], notes: list[str]
) -> None:
    """GPUs without a NUMA Affinity share the node of GPUs with the same CPU set."""
    known: dict[tuple[int, ...], int] = {}
    for pos, n in zip(gpus_pos, numa, strict=True):
        if n is not None and m.cpu_ids(pos):
            known.setdefault(m.cpu_ids(pos), n)
    used = {n for n in numa if n is not None}
    grouped: dict[tuple[int, ...], int] = {}
    listed: list[str] = []
    for k, pos in enumerate(gpus_pos):
        cpus = m.cpu_ids(pos)
        if numa[k] is not None or not cpus:
            continue
        if cpus not in known and cpus not in grouped:
            # New ids in order of first appearance, skipping ids the file printed elsewhere.
            grouped[cpus] = min(set(range(len(used) + 1)) - used)
            used.add(grouped[cpus])
            listed.append(f"{m.cpu_affinity[pos]} -> {grouped[cpus]}")
        numa[k] = known.get(cpus, grouped.get(cpus))
    if listed:
        notes.append(
            f"NUMA Affinity not printed; NUMA nodes numbered by CPU Affinity: {', '.join(listed)}"
        )


def _pcie_rank(m: TopoMatrix, a: int, b: int) -> int:
    """How near a and b are over PCIe; NVLink hides that, so look through a NIC both reach."""
    if not m.cells[a][b].is_nvlink:
        return m.cells[a][b].rank
    via = [max(m.cells[a][n].rank, m.cells[n][b].rank) for n in m.nic_positions]
    return min(via, default=_SYS_RANK)


def _numa_from_neighbours(
    m: TopoMatrix, gpus_pos: list[int], numa: list[int | None], notes: list[str]
) -> None:
    """An unplaced GPU joins the node of the nearest placed GPU it reaches without SYS."""
    changed = True
    while changed:
        changed = False
        for k, pos in enumerate(gpus_pos):
            if numa[k] is not None:
                continue
            near = [
                (_pcie_rank(m, pos, q), n, q)
                for q, n in zip(gpus_pos, numa, strict=True)
                if n is not None and _pcie_rank(m, pos, q) < _SYS_RANK
            ]
            if near:
                _, numa[k], q = min(near)
                notes.append(
                    f"{m.device_names[pos]}: no CPU or NUMA affinity printed; put on NUMA "
                    f"{numa[k]} like {m.device_names[q]}, which it reaches without SYS"
                )
                changed = True


def _nic_numa(
    m: TopoMatrix, nic: int, gpus_pos: list[int], gpu_numa: list[int], notes: list[str]
) -> int | None:
    ranks = [m.cells[nic][g].rank for g in gpus_pos]
    best = min((r for r in ranks if r < _SYS_RANK), default=None)
    if best is None:
        return None
    votes = Counter(n for r, n in zip(ranks, gpu_numa, strict=True) if r == best)
    # Ties go to the node most of the nearest GPUs are on, then to the lowest id.
    chosen = min(votes, key=lambda n: (-votes[n], n))
    if len(votes) > 1:
        notes.append(
            f"{m.nic_name(nic)} is equally near GPUs on NUMA {sorted(votes)}; put on {chosen}"
        )
    return chosen


def _numa_nodes(m: TopoMatrix, gpus_pos: list[int], gpus: tuple[Gpu, ...]) -> tuple[NumaNode, ...]:
    cpus: dict[int, set[int]] = {}
    for gpu in gpus:
        if gpu.numa is not None:
            cpus.setdefault(gpu.numa, set()).update(gpu.cpu_affinity)
    nodes = [NumaNode(id=NumaId(n), cpus=tuple(sorted(c))) for n, c in cpus.items()]
    for gpu, pos in zip(gpus, gpus_pos, strict=True):
        mem = gpu.memory_numa
        if mem is None:
            continue
        if mem in cpus or any(n.id == mem for n in nodes[len(cpus) :]):
            problem = f"GPU NUMA ID {mem} of GPU{gpu.index} is already a NUMA node"
            raise _fail(m, m.row_lines[pos], "GPU NUMA ID", problem, "a node of its own")
        nodes.append(NumaNode(id=mem, kind=NumaKind.GPU_MEMORY))
    return tuple(sorted(nodes, key=lambda n: n.id))
