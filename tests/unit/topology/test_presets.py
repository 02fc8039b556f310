"""Presets: every one builds, and those that mirror a real ``nvidia-smi topo -m`` capture match it.

The captures are read with a small reader local to this test (not the project's parser), so a
parser bug cannot hide a preset bug or the other way round.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpuplane.core.cpuset import format_cpu_list, parse_cpu_list
from gpuplane.core.errors import InputError
from gpuplane.topology.catalog import get_gpu_model
from gpuplane.topology.links import LinkClass
from gpuplane.topology.model import NodeTopology, NumaKind
from gpuplane.topology.presets import load_hardware_file, load_preset, preset_names, preset_spec

# tests/unit/topology -> repo root -> its sibling shared/ (always present next to the checkout).
FIXTURE_DIR = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "topologies"

# preset -> the capture it reproduces exactly.
MIRRORS = {
    "hgx-h200": "hgx-h200-8gpu-nvswitch-12nic.txt",
    "dgx-h100": "hgx-h200-8gpu-nvswitch-12nic.txt",
    "hgx-b200": "b200-8gpu-nvswitch-16nic.txt",
    "dgx-a100": "dgx-a100-8gpu-nvswitch-10nic.txt",
    "dgx1-v100": "dgx1-v100-hybrid-cube-mesh.txt",
    "gh200-4node": "gh200-4gpu-node-nv6.txt",
}
EXPECTED_PRESETS = {
    *MIRRORS,
    "seed-8gpu",
    "l40s-8gpu-pcie",
    "a10-4gpu-pcie",
}

_CELL = re.compile(r"X|NV\d+|PIX|PXB|PHB|NODE|SYS")
_DEVICE = re.compile(r"^(GPU\d+|NIC\d+|mlx\d+_\d+)$")


@dataclass
class Capture:
    names: list[str]
    labels: list[list[str]]
    extra: dict[str, list[str]]  # row name -> the columns after the matrix (affinities, NUMA ID)


def read_capture(path: Path) -> Capture:
    """Rows of a ``topo -m`` capture: split on whitespace, glued cells split by ``_CELL``."""
    lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
    names = [tok for tok in lines[0].split() if _DEVICE.match(tok)]
    labels: list[list[str]] = []
    extra: dict[str, list[str]] = {}
    for line in lines[1:]:
        row, *rest = line.split()
        if row not in names:
            break
        cells: list[str] = []
        tokens = list(rest)
        while tokens and len(cells) < len(names):
            cells.extend(_CELL.findall(tokens.pop(0)))
        assert len(cells) == len(names), f"{path.name} {row}: {len(cells)} cells"
        labels.append(cells)
        extra[row] = tokens
    assert len(labels) == len(names)
    return Capture(names, labels, extra)


def capture(name: str) -> Capture:
    # The shared data sits beside the repository (README); a missing fixture is a failure.
    return read_capture(FIXTURE_DIR / name)


def test_the_bundled_presets_are_the_expected_ones() -> None:
    assert set(preset_names()) == EXPECTED_PRESETS
    assert preset_names() == sorted(preset_names())


@pytest.mark.parametrize("name", sorted(EXPECTED_PRESETS))
def test_every_preset_builds_and_is_self_consistent(name: str) -> None:
    topo = load_preset(name)
    spec = preset_spec(name)
    assert isinstance(topo, NodeTopology)  # __post_init__ checked square, symmetric, X diagonal
    assert topo.name == name == spec.name
    assert spec.sources and spec.description
    assert topo.source.endswith(f"presets/{name}.yaml")
    n = topo.num_gpus + len(topo.nics)
    for i in range(n):
        assert topo.bandwidth_gbps[i][i] == 0.0
        for j in range(n):
            assert topo.bandwidth_gbps[i][j] == topo.bandwidth_gbps[j][i]
            if i != j:
                assert topo.bandwidth_gbps[i][j] > 0
    cpu_ids = [c for node in topo.numa_nodes for c in node.cpus]
    assert len(cpu_ids) == len(set(cpu_ids))
    for gpu in topo.gpus:
        assert gpu.numa in topo.numa_ids() and gpu.cpu_affinity
        assert gpu.model == get_gpu_model(gpu.model).name


@pytest.mark.parametrize(("preset", "fixture"), sorted(MIRRORS.items()))
def test_preset_reproduces_its_capture(preset: str, fixture: str) -> None:
    cap = capture(fixture)
    topo = load_preset(preset)
    assert topo.link_labels() == cap.labels
    nic_names = [n for n in cap.names if not n.startswith("GPU")]
    if nic_names and nic_names[0].startswith("mlx"):  # old drivers head NIC columns by name
        assert [nic.name for nic in topo.nics] == nic_names
    else:
        assert [f"NIC{nic.index}" for nic in topo.nics] == nic_names


@pytest.mark.parametrize(("preset", "fixture"), sorted(MIRRORS.items()))
def test_preset_cpu_affinity_matches_its_capture(preset: str, fixture: str) -> None:
    cap = capture(fixture)
    for gpu in load_preset(preset).gpus:
        cpu_column = cap.extra[f"GPU{gpu.index}"][0]
        assert format_cpu_list(gpu.cpu_affinity) == format_cpu_list(parse_cpu_list(cpu_column))


@pytest.mark.parametrize("preset", ["hgx-h200", "hgx-b200", "dgx-a100", "dgx-h100"])
def test_preset_numa_affinity_matches_its_capture(preset: str) -> None:
    cap = capture(MIRRORS[preset])
    for gpu in load_preset(preset).gpus:
        assert [str(n) for n in gpu.numa_affinity] == [cap.extra[f"GPU{gpu.index}"][1]]


def test_gh200_gpu_numa_ids_match_the_capture() -> None:
    cap = capture(MIRRORS["gh200-4node"])
    topo = load_preset("gh200-4node")
    for gpu in topo.gpus:
        row = cap.extra[f"GPU{gpu.index}"]
        assert str(gpu.memory_numa) == row[2]
        # The capture lists extra CPU-less nodes too (0,5-11); the CPU node comes first.
        assert str(gpu.numa) == row[1].split(",")[0]
    kinds = {n.id: n.kind for n in topo.numa_nodes}
    assert [i for i, k in kinds.items() if k is NumaKind.GPU_MEMORY] == [4, 12, 20, 28]
    assert all(g.pcie_gbps == 450.0 for g in topo.gpus)  # NVLink-C2C, per direction


def test_nvswitch_presets_bandwidth_and_islands() -> None:
    h200, b200, a100 = load_preset("hgx-h200"), load_preset("hgx-b200"), load_preset("dgx-a100")
    assert h200.nvswitch and b200.nvswitch and a100.nvswitch
    assert h200.gpu_bandwidth_gbps(0, 7) == 18 * 25.0  # NVLink 4: 50 GB/s bidir per link
    assert b200.gpu_bandwidth_gbps(0, 7) == 18 * 50.0  # NVLink 5: 100 GB/s bidir per link
    assert a100.gpu_bandwidth_gbps(0, 7) == 12 * 25.0
    assert h200.nvlink_islands() == [list(range(8))]


def test_nearest_nics_follow_the_captures() -> None:
    h200 = load_preset("hgx-h200")
    assert [h200.nearest_nics(g) for g in range(8)] == [[0], [3], [4], [5], [6], [9], [10], [11]]
    a100 = load_preset("dgx-a100")
    assert a100.nearest_nics(0) == [0, 1] and a100.nearest_nics(7) == [6, 7]


def test_dgx1_mesh_and_illustrative_presets() -> None:
    dgx1 = load_preset("dgx1-v100")
    assert not dgx1.nvswitch and dgx1.nvlink_islands() == [list(range(8))]
    assert dgx1.gpu_link(0, 5).cls is LinkClass.SYS
    seed = load_preset("seed-8gpu")
    assert seed.nvlink_islands() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert seed.gpu_bandwidth_gbps(0, 4) == 32.0  # the stated inter-socket choice
    assert seed.gpu_link(0, 3).cls is LinkClass.NODE
    l40s = load_preset("l40s-8gpu-pcie")
    assert l40s.gpu_link(0, 1).cls is LinkClass.PIX and l40s.gpu_link(0, 4).cls is LinkClass.SYS
    a10 = load_preset("a10-4gpu-pcie")
    assert [a10.gpu_link(0, j).label for j in range(4)] == ["X", "PHB", "NODE", "NODE"]
    assert a10.gpu_nic_link(0, 0).cls is LinkClass.PHB


def test_unknown_preset_lists_the_valid_names() -> None:
    with pytest.raises(InputError) as info:
        load_preset("dgx-h900")
    assert "dgx-h900" in str(info.value)
    for name in EXPECTED_PRESETS:
        assert name in (info.value.expected or "")


def test_load_hardware_file_reads_a_users_file(tmp_path: Path) -> None:
    path = tmp_path / "mynode.yaml"
    path.write_text(
        "name: mynode\ngpu_model: A10\n"
        "cpu: {model: x, sockets: 1, cores_per_socket: 4}\n"
        "numa_nodes: [{id: 0, cpus: '0-3', socket: 0}]\n"
        "bridges: [{id: hb0, kind: host-bridge, numa: 0}]\n"
        "gpus: [{index: 0, parent: hb0}, {index: 1, parent: hb0}]\n"
    )
    topo = load_hardware_file(path)
    assert topo.name == "mynode" and topo.source == str(path)
    assert topo.gpu_link_labels() == [["X", "PHB"], ["PHB", "X"]]


def test_load_hardware_file_errors_are_located(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(InputError) as info:
        load_hardware_file(missing)
    assert info.value.location.source == str(missing)
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00name")
    with pytest.raises(InputError) as info:
        load_hardware_file(binary)
    assert info.value.location.source == str(binary)
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ngpu_model: A10\nwat: 1\n")
    with pytest.raises(InputError) as info:
        load_hardware_file(bad)
    assert info.value.location.source == str(bad)
    assert info.value.location.line == 3 and info.value.location.field == "wat"
