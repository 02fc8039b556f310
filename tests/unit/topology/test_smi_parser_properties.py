"""Round trip: random symmetric topologies, printed the way nvidia-smi (tabs) or a renderer
(aligned spaces) prints them, must parse back to the same matrix, affinities and legend."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.topology.from_matrix import topology_from_matrix
from gpuplane.topology.smi_parser import (
    CPU_AFFINITY,
    GPU_NUMA_ID,
    NUMA_AFFINITY,
    TopoMatrix,
    parse_topo_text,
)

PCIE = ["PIX", "PXB", "PHB", "NODE", "SYS"]
LEGEND = (
    "Legend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP interconnect"
    "\n  NV#  = Connection traversing a bonded set of # NVLinks\n"
)


@dataclass(frozen=True)
class Topo:
    names: list[str]
    num_gpus: int
    labels: list[list[str]]
    columns: list[str]
    cpu: list[str | None]  # per GPU
    numa: list[int]  # per GPU
    gpu_numa_id: list[int | None]  # per GPU
    legend: dict[str, str]
    nic_trailing_cells: bool


@st.composite
def topologies(draw: st.DrawFn) -> Topo:
    num_gpus = draw(st.integers(1, 16))
    num_nics = draw(st.integers(0, 8))
    n = num_gpus + num_nics
    gpu_link = st.sampled_from(PCIE) | st.integers(1, 18).map(lambda k: f"NV{k}")
    labels = [["X"] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            cell = draw(gpu_link if j < num_gpus else st.sampled_from(PCIE))
            labels[i][j] = labels[j][i] = cell
    columns = draw(st.permutations([CPU_AFFINITY, NUMA_AFFINITY, GPU_NUMA_ID]))
    columns = columns[: draw(st.integers(0, 3))]
    numa = [draw(st.integers(0, 7)) for _ in range(num_gpus)]
    cpu = [draw(st.sampled_from([None, f"{k * 8}-{k * 8 + 7}", f"{k},{k + 64}"])) for k in numa]
    memory_ids = draw(
        st.lists(st.integers(100, 199), min_size=num_gpus, max_size=num_gpus, unique=True)
    )
    gpu_numa_id = [draw(st.sampled_from([None, mem])) for mem in memory_ids]
    with_legend = draw(st.booleans())
    nics = [f"NIC{k}" if with_legend else f"mlx5_{k}" for k in range(num_nics)]
    legend = {name: f"mlx5_{k}" for k, name in enumerate(nics)} if with_legend else {}
    return Topo(
        names=[f"GPU{k}" for k in range(num_gpus)] + nics,
        num_gpus=num_gpus,
        labels=labels,
        columns=columns,
        cpu=cpu,
        numa=numa,
        gpu_numa_id=gpu_numa_id,
        legend=legend,
        nic_trailing_cells=draw(st.booleans()),
    )


def values(t: Topo, gpu: int) -> list[str]:
    by_column = {
        CPU_AFFINITY: t.cpu[gpu] or "",
        NUMA_AFFINITY: str(t.numa[gpu]),
        GPU_NUMA_ID: "N/A" if t.gpu_numa_id[gpu] is None else str(t.gpu_numa_id[gpu]),
    }
    return [by_column[c] for c in t.columns]


def footer(t: Topo) -> str:
    legend = "".join(f"  {k}: {v}\n" for k, v in t.legend.items())
    return "\n" + LEGEND + ("\nNIC Legend:\n\n" + legend if legend else "")


def render_tabs(t: Topo) -> str:
    """As the driver prints it: `` X `` cells, and an extra tab after the NUMA Affinity value."""
    out = ["\t" + "\t".join(t.names + t.columns)]
    for i, name in enumerate(t.names):
        cells = [" X " if c == "X" else c for c in t.labels[i]]
        if i < t.num_gpus:
            for column, value in zip(t.columns, values(t, i), strict=True):
                cells.append(value)
                if column == NUMA_AFFINITY and column != t.columns[-1]:
                    cells.append("")
        elif t.nic_trailing_cells:
            cells += [""] * len(t.columns)
        out.append("\t".join([name, *cells]))
    return "\n".join(out) + "\n" + footer(t)


def render_spaces(t: Topo) -> str:
    """Left-aligned columns padded with spaces, as a pasted table looks after rendering."""
    table = [["", *t.names, *t.columns]]
    for i, name in enumerate(t.names):
        extra = values(t, i) if i < t.num_gpus else [""] * len(t.columns)
        table.append([name, *t.labels[i], *extra])
    widths = [max(len(row[k]) for row in table) + 2 for k in range(len(table[0]))]
    lines = ["".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in table]
    return "\n".join(line.rstrip() for line in lines) + "\n" + footer(t)


def check_round_trip(t: Topo, m: TopoMatrix) -> None:
    assert list(m.device_names) == t.names
    assert m.labels() == t.labels
    assert list(m.columns) == t.columns
    assert m.nic_legend == t.legend
    gpus = range(t.num_gpus)
    nic_none = [None] * (len(t.names) - t.num_gpus)
    if CPU_AFFINITY in t.columns:
        assert list(m.cpu_affinity) == t.cpu + nic_none
    if NUMA_AFFINITY in t.columns:
        assert list(m.numa_affinity) == [str(t.numa[g]) for g in gpus] + nic_none
    if GPU_NUMA_ID in t.columns:
        expected = [None if v is None else str(v) for v in t.gpu_numa_id]
        assert list(m.gpu_numa_id) == expected + nic_none
    absent = [c for c in (CPU_AFFINITY, NUMA_AFFINITY, GPU_NUMA_ID) if c not in t.columns]
    by_column = {CPU_AFFINITY: m.cpu_affinity, NUMA_AFFINITY: m.numa_affinity}
    for column in absent:
        assert set(by_column.get(column, m.gpu_numa_id)) == {None}


def check_properties(t: Topo, m: TopoMatrix) -> None:
    n = len(m.cells)
    assert all(m.cells[i][j] == m.cells[j][i] for i in range(n) for j in range(n))
    assert all((m.cells[i][j].label == "X") == (i == j) for i in range(n) for j in range(n))
    node = topology_from_matrix(m)
    assert len(node.gpus) == t.num_gpus and len(node.nics) == n - t.num_gpus
    if NUMA_AFFINITY in t.columns:
        # Exactly one NUMA node per GPU, the printed one.
        assert [m.numa_ids(p) for p in m.gpu_positions] == [(k,) for k in t.numa]
        assert [g.numa for g in node.gpus] == t.numa
    gpu_numas = {g.numa for g in node.gpus}
    assert all(nic.numa is None or nic.numa in gpu_numas for nic in node.nics)


@settings(max_examples=150, deadline=None)
@given(topologies())
def test_tab_output_round_trips(t: Topo) -> None:
    m = parse_topo_text(render_tabs(t), "tabs.txt")
    check_round_trip(t, m)
    check_properties(t, m)


@settings(max_examples=150, deadline=None)
@given(topologies())
def test_space_output_round_trips(t: Topo) -> None:
    m = parse_topo_text(render_spaces(t), "spaces.txt")
    check_round_trip(t, m)
    check_properties(t, m)


@settings(max_examples=60, deadline=None)
@given(topologies())
def test_tab_and_space_output_agree(t: Topo) -> None:
    a = parse_topo_text(render_tabs(t), "same.txt")
    b = parse_topo_text(render_spaces(t), "same.txt")
    assert (a.cells, a.cpu_affinity, a.numa_affinity, a.gpu_numa_id) == (
        b.cells,
        b.cpu_affinity,
        b.numa_affinity,
        b.gpu_numa_id,
    )
