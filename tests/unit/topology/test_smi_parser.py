"""The ``nvidia-smi topo -m`` parser on the real outputs in shared/data/topologies and on
small hand-written texts that break one rule each."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuplane.core.errors import InputError
from gpuplane.topology.smi_parser import TopoMatrix, parse_topo_text

# tests/unit/topology -> repo root -> its sibling shared/ (always present next to the checkout).
FIXTURE_DIR = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "topologies"
FIXTURE_NAMES = sorted(p.name for p in FIXTURE_DIR.glob("*.txt"))


def fixture_text(name: str) -> str:
    return (FIXTURE_DIR / name).read_text(encoding="utf-8")


def parse_fixture(name: str) -> TopoMatrix:
    return parse_topo_text(fixture_text(name), name)


def rows(*lines: str) -> list[list[str]]:
    return [line.split() for line in lines]


B200 = rows(
    "X NV18 NV18 NV18 NV18 NV18 NV18 NV18 "
    "NODE NODE NODE NODE PXB NODE NODE NODE NODE NODE SYS SYS SYS SYS SYS SYS",  # GPU0
    "NV18 X NV18 NV18 NV18 NV18 NV18 NV18 "
    "NODE NODE NODE NODE NODE NODE NODE PXB NODE NODE SYS SYS SYS SYS SYS SYS",  # GPU1
    "NV18 NV18 X NV18 NV18 NV18 NV18 NV18 "
    "NODE NODE NODE NODE NODE NODE NODE NODE PXB NODE SYS SYS SYS SYS SYS SYS",  # GPU2
    "NV18 NV18 NV18 X NV18 NV18 NV18 NV18 "
    "NODE NODE NODE NODE NODE NODE NODE NODE NODE PXB SYS SYS SYS SYS SYS SYS",  # GPU3
    "NV18 NV18 NV18 NV18 X NV18 NV18 NV18 "
    "SYS SYS SYS SYS SYS SYS SYS SYS SYS SYS PXB NODE NODE NODE NODE NODE",  # GPU4
    "NV18 NV18 NV18 NV18 NV18 X NV18 NV18 "
    "SYS SYS SYS SYS SYS SYS SYS SYS SYS SYS NODE NODE NODE PXB NODE NODE",  # GPU5
    "NV18 NV18 NV18 NV18 NV18 NV18 X NV18 "
    "SYS SYS SYS SYS SYS SYS SYS SYS SYS SYS NODE NODE NODE NODE PXB NODE",  # GPU6
    "NV18 NV18 NV18 NV18 NV18 NV18 NV18 X "
    "SYS SYS SYS SYS SYS SYS SYS SYS SYS SYS NODE NODE NODE NODE NODE PXB",  # GPU7
    "NODE NODE NODE NODE SYS SYS SYS SYS "
    "X PIX PIX PIX NODE NODE NODE NODE NODE NODE SYS SYS SYS SYS SYS SYS",  # NIC0
    "NODE NODE NODE NODE SYS SYS SYS SYS "
    "PIX X PIX PIX NODE NODE NODE NODE NODE NODE SYS SYS SYS SYS SYS SYS",  # NIC1
    "NODE NODE NODE NODE SYS SYS SYS SYS "
    "PIX PIX X PIX NODE NODE NODE NODE NODE NODE SYS SYS SYS SYS SYS SYS",  # NIC2
    "NODE NODE NODE NODE SYS SYS SYS SYS "
    "PIX PIX PIX X NODE NODE NODE NODE NODE NODE SYS SYS SYS SYS SYS SYS",  # NIC3
    "PXB NODE NODE NODE SYS SYS SYS SYS "
    "NODE NODE NODE NODE X NODE NODE NODE NODE NODE SYS SYS SYS SYS SYS SYS",  # NIC4
    "NODE NODE NODE NODE SYS SYS SYS SYS "
    "NODE NODE NODE NODE NODE X PIX NODE NODE NODE SYS SYS SYS SYS SYS SYS",  # NIC5
    "NODE NODE NODE NODE SYS SYS SYS SYS "
    "NODE NODE NODE NODE NODE PIX X NODE NODE NODE SYS SYS SYS SYS SYS SYS",  # NIC6
    "NODE PXB NODE NODE SYS SYS SYS SYS "
    "NODE NODE NODE NODE NODE NODE NODE X NODE NODE SYS SYS SYS SYS SYS SYS",  # NIC7
    "NODE NODE PXB NODE SYS SYS SYS SYS "
    "NODE NODE NODE NODE NODE NODE NODE NODE X NODE SYS SYS SYS SYS SYS SYS",  # NIC8
    "NODE NODE NODE PXB SYS SYS SYS SYS "
    "NODE NODE NODE NODE NODE NODE NODE NODE NODE X SYS SYS SYS SYS SYS SYS",  # NIC9
    "SYS SYS SYS SYS PXB NODE NODE NODE "
    "SYS SYS SYS SYS SYS SYS SYS SYS SYS SYS X NODE NODE NODE NODE NODE",  # NIC10
    "SYS SYS SYS SYS NODE NODE NODE NODE "
    "SYS SYS SYS SYS SYS SYS SYS SYS SYS SYS NODE X PIX NODE NODE NODE",  # NIC11
    "SYS SYS SYS SYS NODE NODE NODE NODE "
    "SYS SYS SYS SYS SYS SYS SYS SYS SYS SYS NODE PIX X NODE NODE NODE",  # NIC12
    "SYS SYS SYS SYS NODE PXB NODE NODE "
    "SYS SYS SYS SYS SYS SYS SYS SYS SYS SYS NODE NODE NODE X NODE NODE",  # NIC13
    "SYS SYS SYS SYS NODE NODE PXB NODE "
    "SYS SYS SYS SYS SYS SYS SYS SYS SYS SYS NODE NODE NODE NODE X NODE",  # NIC14
    "SYS SYS SYS SYS NODE NODE NODE PXB "
    "SYS SYS SYS SYS SYS SYS SYS SYS SYS SYS NODE NODE NODE NODE NODE X",  # NIC15
)

DGX1 = rows(
    "X NV1 NV1 NV2 NV2 SYS SYS SYS NODE",  # GPU0
    "NV1 X NV2 NV1 SYS NV2 SYS SYS NODE",  # GPU1
    "NV1 NV2 X NV2 SYS SYS NV1 SYS PIX",  # GPU2
    "NV2 NV1 NV2 X SYS SYS SYS NV1 PIX",  # GPU3
    "NV2 SYS SYS SYS X NV1 NV1 NV2 SYS",  # GPU4
    "SYS NV2 SYS SYS NV1 X NV2 NV1 SYS",  # GPU5
    "SYS SYS NV1 SYS NV1 NV2 X NV2 SYS",  # GPU6
    "SYS SYS SYS NV1 NV2 NV1 NV2 X SYS",  # GPU7
    "NODE NODE PIX PIX SYS SYS SYS SYS X",  # mlx5_0
)

WORKSTATION = rows(
    "X SYS SYS SYS SYS",  # GPU0
    "SYS X PHB NODE NODE",  # GPU1
    "SYS PHB X NODE NODE",  # GPU2
    "SYS NODE NODE X PHB",  # GPU3
    "SYS NODE NODE PHB X",  # GPU4
)

GH200 = rows(
    "X NV6 NV6 NV6",
    "NV6 X NV6 NV6",
    "NV6 NV6 X NV6",
    "NV6 NV6 NV6 X",
)

L40S = rows(
    "X NODE SYS SYS SYS SYS",  # GPU0
    "NODE X SYS SYS SYS SYS",  # GPU1
    "SYS SYS X NODE NODE NODE",  # GPU2
    "SYS SYS NODE X NODE NODE",  # GPU3
    "SYS SYS NODE NODE X PIX",  # NIC0
    "SYS SYS NODE NODE PIX X",  # NIC1
)

EXPECTED = {
    "b200-8gpu-nvswitch-16nic.txt": B200,
    "dgx1-v100-hybrid-cube-mesh.txt": DGX1,
    "workstation-5gpu-pcie-phb-node-sys.txt": WORKSTATION,
    "gh200-4gpu-node-nv6.txt": GH200,
    "l40s-4gpu-pcie-dual-socket.txt": L40S,
}

# (file, number of GPUs, number of NICs, known cells as (row, column, label))
SHAPES = {
    "b200-8gpu-nvswitch-16nic.txt": (8, 16, [("GPU2", "NIC8", "PXB"), ("NIC8", "NIC9", "NODE")]),
    "dgx-a100-8gpu-nvswitch-10nic.txt": (8, 10, [("GPU0", "NIC0", "PXB"), ("NIC8", "NIC9", "PIX")]),
    "dgx1-v100-hybrid-cube-mesh.txt": (8, 1, [("GPU0", "GPU3", "NV2"), ("GPU2", "mlx5_0", "PIX")]),
    "gh200-4gpu-node-nv6.txt": (4, 0, [("GPU0", "GPU3", "NV6")]),
    "h100-sxm-8gpu-nvswitch-6nic.txt": (8, 6, [("GPU0", "NIC1", "PIX"), ("NIC3", "NIC4", "PIX")]),
    "hgx-h200-8gpu-nvswitch-12nic.txt": (
        8,
        12,
        [("GPU7", "NIC11", "PXB"), ("GPU0", "NIC6", "SYS")],
    ),
    "l40s-4gpu-pcie-dual-socket.txt": (4, 2, [("GPU2", "NIC1", "NODE")]),
    "pcie-8gpu-plx-switches-dual-socket.txt": (
        8,
        1,
        [("GPU0", "GPU1", "PIX"), ("mlx5_0", "GPU4", "PHB")],
    ),
    "rtx4090-8gpu-pcie-dual-socket.txt": (8, 2, [("GPU6", "NIC0", "PHB"), ("GPU0", "GPU7", "SYS")]),
    "workstation-5gpu-pcie-phb-node-sys.txt": (5, 0, [("GPU3", "GPU4", "PHB")]),
}


def test_every_fixture_is_covered() -> None:
    assert sorted(SHAPES) == FIXTURE_NAMES
    assert len(FIXTURE_NAMES) >= 10


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_shape_diagonal_symmetry_and_known_cells(name: str) -> None:
    m = parse_fixture(name)
    num_gpus, num_nics, known = SHAPES[name]
    n = num_gpus + num_nics
    labels = m.labels()
    assert len(m.gpu_positions) == num_gpus and len(m.nic_positions) == num_nics
    assert len(m.device_names) == n and len(labels) == n and all(len(r) == n for r in labels)
    assert all(labels[i][i] == "X" for i in range(n))
    assert all(labels[i][j] == labels[j][i] for i in range(n) for j in range(n))
    assert all(labels[i][j] != "X" for i in range(n) for j in range(n) if i != j)
    names = list(m.device_names)
    for row, col, label in known:
        assert labels[names.index(row)][names.index(col)] == label
    assert m.row_lines == tuple(range(2, n + 2))
    assert m.header_line == 1


@pytest.mark.parametrize("name", sorted(set(FIXTURE_NAMES) - {"b200-8gpu-nvswitch-16nic.txt"}))
def test_labels_equal_the_cells_in_the_file(name: str) -> None:
    """Where no cells are glued, a plain whitespace split of each row is the matrix."""
    m = parse_fixture(name)
    lines = fixture_text(name).split("\n")
    n = len(m.device_names)
    in_file = [lines[i].split()[1 : n + 1] for i in range(1, n + 1)]
    assert m.labels() == [["SYS" if c == "SOC" else c for c in row] for row in in_file]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_labels_row_by_row(name: str) -> None:
    assert parse_fixture(name).labels() == EXPECTED[name]


def test_b200_glued_cells_are_split_into_24_per_row() -> None:
    m = parse_fixture("b200-8gpu-nvswitch-16nic.txt")
    assert all(len(row) == 24 for row in m.cells)
    assert len(m.repairs) == 12
    assert "line 4: 'PXBNODE' -> PXB NODE" in m.repairs
    assert "line 18: 'X NODE' -> X NODE" in m.repairs
    assert m.cpu_affinity[:8] == ("0-55,112-167",) * 4 + ("56-111,168-223",) * 4
    assert m.numa_affinity[:8] == ("0",) * 4 + ("1",) * 4


def test_h100_empty_cpu_affinity_and_nic_legend() -> None:
    m = parse_fixture("h100-sxm-8gpu-nvswitch-6nic.txt")
    assert m.cpu_affinity == (None,) * 4 + ("1",) * 4 + (None,) * 6
    assert m.numa_affinity == ("0",) * 4 + ("1",) * 4 + (None,) * 6
    assert m.gpu_numa_id == (None,) * 14
    assert m.nic_legend == {f"NIC{i}": f"mlx5_{i}" for i in range(6)}
    assert m.nic_name(m.nic_positions[0]) == "mlx5_0"
    assert m.columns == ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")


def test_gh200_numa_lists_and_gpu_numa_ids() -> None:
    m = parse_fixture("gh200-4gpu-node-nv6.txt")
    assert m.cpu_affinity == ("0-71", "72-143", "144-215", "216-287")
    assert m.numa_affinity == ("0,5-11", "1,13-19", "2,21-27", "3,29-35")
    assert m.gpu_numa_id == ("4", "12", "20", "28")
    assert m.first_numa(0) == 0 and m.numa_ids(0) == (0, 5, 6, 7, 8, 9, 10, 11)
    assert [m.memory_numa(p) for p in m.gpu_positions] == [4, 12, 20, 28]
    assert m.nic_legend == {}


def test_dgx_a100_affinities_and_legend() -> None:
    m = parse_fixture("dgx-a100-8gpu-nvswitch-10nic.txt")
    assert m.numa_affinity[:8] == ("3", "3", "1", "1", "7", "7", "5", "5")
    assert m.cpu_affinity[0] == "48-63,176-191" and m.cpu_affinity[4] == "112-127,240-255"
    assert m.cpu_ids(0) == (*range(48, 64), *range(176, 192))
    assert m.gpu_numa_id == (None,) * 18
    assert m.nic_legend["NIC9"] == "mlx5_9" and len(m.nic_legend) == 10


def test_old_outputs_name_nics_directly() -> None:
    m = parse_fixture("dgx1-v100-hybrid-cube-mesh.txt")
    assert m.device_names[-1] == "mlx5_0" and m.nic_positions == (8,)
    assert m.nic_name(8) == "mlx5_0"
    assert m.columns == ("CPU Affinity",)
    assert m.numa_affinity == (None,) * 9


# ----- small texts -----
TAB = "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"


def tab_text(*body: str, header: str = TAB) -> str:
    return header + "".join(line + "\n" for line in body)


GOOD_TAB = (
    "GPU0\t X \tNV4\tPIX\t0-7\t0\t\tN/A",
    "GPU1\tNV4\t X \tSYS\t8-15\t1\t\tN/A",
    "NIC0\tPIX\tSYS\t X ",
)


def test_small_tab_text_parses() -> None:
    m = parse_topo_text(tab_text(*GOOD_TAB, "", "NIC Legend:", "", "  NIC0: mlx5_0"), "t.txt")
    assert m.labels() == rows("X NV4 PIX", "NV4 X SYS", "PIX SYS X")
    assert m.cpu_affinity == ("0-7", "8-15", None)
    assert m.numa_affinity == ("0", "1", None)
    assert m.nic_legend == {"NIC0": "mlx5_0"}


def test_soc_reads_as_sys_and_mixed_separators() -> None:
    text = "   GPU0\tGPU1   CPU Affinity\nGPU0   X\tSOC    0-3\nGPU1\tSOC  X\t4-7\n"
    m = parse_topo_text(text, "mixed.txt")
    assert m.labels() == rows("X SYS", "SYS X")
    assert m.cpu_affinity == ("0-3", "4-7")


def test_space_rows_place_values_under_their_headers() -> None:
    """Without tabs an empty cell is invisible; the value's offset says which column it is."""
    text = (
        "        GPU0    GPU1    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
        "GPU0     X      NV2                     0               N/A\n"
        "GPU1    NV2      X      8-15            1               7\n"
    )
    m = parse_topo_text(text, "s.txt")
    assert m.cpu_affinity == (None, "8-15")
    assert m.numa_affinity == ("0", "1")
    assert m.gpu_numa_id == (None, "7")


def test_rows_end_at_legend_without_blank_line() -> None:
    m = parse_topo_text(tab_text(*GOOD_TAB, "Legend:", "  X    = Self"), "t.txt")
    assert len(m.cells) == 3 and m.nic_legend == {}


def test_crlf_line_ends() -> None:
    m = parse_topo_text(tab_text(*GOOD_TAB).replace("\n", "\r\n"), "t.txt")
    assert m.labels()[0] == ["X", "NV4", "PIX"]


def replace_line(index: int, new: str) -> str:
    lines = list(GOOD_TAB)
    lines[index] = new
    return tab_text(*lines)


BAD = [
    ("", 1, None, "empty"),
    ("\n\n", 1, None, "empty"),
    ("\tCPU Affinity\nGPU0\t0-3\n", 1, None, "no device columns"),
    ("\tNIC0\tNIC1\n", 1, None, "no GPU"),
    ("GPU0\t X \tNV4\n", 1, "X", "not a device name"),
    ("\tGPU0\tGPU0\n", 1, "GPU0", "twice"),
    ("\tGPU0\tCPU Affinity\tBogus\n", 1, None, "unknown text"),
    ("\tGPU0\tCPU Affinity\tCPU Affinity\n", 1, None, "repeated"),
    ("\tGPU123456\n", 1, "GPU123456", "too long"),
    (replace_line(0, "GPU7\t X \tNV4\tPIX"), 2, "GPU7", "not a device"),
    (replace_line(1, "GPU0\tNV4\t X \tSYS"), 3, "GPU0", "second row"),
    (tab_text(*GOOD_TAB[:2]), 1, "NIC0", "has no row"),
    (tab_text(GOOD_TAB[0], "", *GOOD_TAB[1:]), 1, "GPU1", "has no row"),
    (replace_line(0, "GPU0\t X \tNV4\t0-7"), 2, "NIC0", "only 2 link cells"),
    (replace_line(0, "GPU0\t X \tNV4\t\tPIX"), 2, "NIC0", "only 2 link cells"),
    (replace_line(0, "GPU0\t X \tNV4\tPIX\tPIX"), 2, "GPU0", "more than 3"),
    (replace_line(0, "GPU0\t X \tNV4\tPIXPIX"), 2, "GPU0", "more than 3"),
    (replace_line(0, "GPU0\t X \tNV4\tPXQ"), 2, "NIC0", "not a link class"),
    (replace_line(0, "GPU0\t X \tNV0\tPIX"), 2, "GPU1", "not a link class"),
    (replace_line(0, "GPU0\t X \tNV" + "9" * 5000 + "\tPIX"), 2, "GPU1", "not a link class"),
    (replace_line(0, "GPU0\tNV4\tNV4\tPIX"), 2, "GPU0", "GPU0 to GPU0 is NV4"),
    (replace_line(2, "NIC0\tPIX\tX\t X "), 4, "GPU1", "NIC0 to GPU1 is X"),
    (replace_line(2, "NIC0\tPXB\tSYS\t X "), 4, "GPU0", "GPU0 to NIC0 is PIX (line 2)"),
    (replace_line(0, "GPU0\t X \tNV4\tPIX\t0-x\t0"), 2, "CPU Affinity", "'0-x'"),
    (replace_line(0, "GPU0\t X \tNV4\tPIX\t7-0\t0"), 2, "CPU Affinity", "backwards"),
    (replace_line(0, "GPU0\t X \tNV4\tPIX\t0-99999999\t0"), 2, "CPU Affinity", "99999999"),
    (replace_line(0, "GPU0\t X \tNV4\tPIX\t0-7\t0-5000"), 2, "NUMA Affinity", "0-5000"),
    (replace_line(0, "GPU0\t X \tNV4\tPIX\t0-7\t0\t\tfour"), 2, "GPU NUMA ID", "four"),
    (replace_line(0, "GPU0\t X \tNV4\tPIX\t0-7\t0\t\t1\t2"), 2, "GPU NUMA ID", "too many"),
    (tab_text(*GOOD_TAB, "", "NIC Legend:", "  NIC0 mlx5_0"), 7, "NIC Legend", "not a legend"),
    (tab_text(*GOOD_TAB, "NIC Legend:", "  NIC5: mlx5_5"), 6, "NIC Legend", "not a NIC"),
    (tab_text(*GOOD_TAB, "NIC Legend:", "  GPU0: mlx5_5"), 6, "NIC Legend", "not a NIC"),
    (tab_text(*GOOD_TAB, "NIC Legend:", "NIC0: a", "NIC0: b"), 7, "NIC Legend", "twice"),
]


@pytest.mark.parametrize(("text", "line", "field", "problem"), BAD)
def test_errors_say_where_and_what(text: str, line: int, field: str | None, problem: str) -> None:
    with pytest.raises(InputError) as info:
        parse_topo_text(text, "bad.txt")
    err = info.value
    assert (err.location.source, err.location.line, err.location.field) == ("bad.txt", line, field)
    assert problem in err.problem
    assert err.expected
    assert re.search(rf"bad\.txt:{line}\b", str(err))


def test_space_values_that_cannot_be_placed() -> None:
    text = "        GPU0    CPU Affinity    NUMA Affinity   GPU NUMA ID\nGPU0     X      0-3 4-7\n"
    with pytest.raises(InputError, match="cannot tell which column"):
        parse_topo_text(text, "s.txt")
