"""Building a NodeTopology from a parsed ``nvidia-smi topo -m`` matrix: model fallback, NUMA
inference, NIC placement, bandwidth, and the notes that say what was assumed."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.core.errors import InputError
from gpuplane.topology.bandwidth import DEFAULT_INTER_SOCKET_GBPS
from gpuplane.topology.catalog import get_gpu_model
from gpuplane.topology.from_matrix import (
    FALLBACK_MODELS,
    load_topology_text_file,
    topology_from_matrix,
)
from gpuplane.topology.model import NodeTopology, NumaKind
from gpuplane.topology.smi_parser import parse_topo_text
from tests.unit.topology.test_smi_parser import FIXTURE_DIR, FIXTURE_NAMES


def load(name: str, gpu_model: str | None = None) -> NodeTopology:
    return load_topology_text_file(FIXTURE_DIR / name, gpu_model=gpu_model)


def from_text(text: str, gpu_model: str | None = None) -> NodeTopology:
    return topology_from_matrix(parse_topo_text(text, "node.txt"), gpu_model=gpu_model)


# file -> (assumed model, nvswitch, NUMA of each GPU, NUMA of each NIC)
EXPECTED = {
    "b200-8gpu-nvswitch-16nic.txt": (
        "H100-80GB-SXM",
        True,
        [0, 0, 0, 0, 1, 1, 1, 1],
        [0] * 10 + [1] * 6,
    ),
    "dgx-a100-8gpu-nvswitch-10nic.txt": (
        "A100-SXM4-80GB",
        True,
        [3, 3, 1, 1, 7, 7, 5, 5],
        [3, 3, 1, 1, 7, 7, 5, 5, None, None],
    ),
    "dgx1-v100-hybrid-cube-mesh.txt": ("V100-SXM2-16GB", False, [0] * 4 + [1] * 4, [0]),
    "gh200-4gpu-node-nv6.txt": ("GH200-96GB", False, [0, 1, 2, 3], []),
    "h100-sxm-8gpu-nvswitch-6nic.txt": (
        "H100-80GB-SXM",
        True,
        [0] * 4 + [1] * 4,
        [0, 0, 0, 1, 1, 1],
    ),
    "hgx-h200-8gpu-nvswitch-12nic.txt": (
        "H100-80GB-SXM",
        True,
        [0] * 4 + [1] * 4,
        [0] * 6 + [1] * 6,
    ),
    "l40s-4gpu-pcie-dual-socket.txt": ("L40S", False, [0, 0, 1, 1], [1, 1]),
    "pcie-8gpu-plx-switches-dual-socket.txt": ("L40S", False, [0] * 4 + [1] * 4, [1]),
    "rtx4090-8gpu-pcie-dual-socket.txt": ("L40S", False, [0] * 4 + [1] * 4, [1, 1]),
    "workstation-5gpu-pcie-phb-node-sys.txt": ("L40S", False, [1, 0, 0, 0, 0], []),
}


def test_every_fixture_has_expectations() -> None:
    assert sorted(EXPECTED) == FIXTURE_NAMES


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_builds_the_expected_node(name: str) -> None:
    model, nvswitch, gpu_numa, nic_numa = EXPECTED[name]
    node = load(name)
    assert node.gpu_models == (model,)
    assert node.nvswitch is nvswitch
    assert [g.numa for g in node.gpus] == gpu_numa
    assert [n.numa for n in node.nics] == nic_numa
    assert node.name == name.removesuffix(".txt")
    assert node.source == f"file:{FIXTURE_DIR / name}"
    assert any(f"assumed {model}" in note and "--gpu-model" in note for note in node.notes)
    assert sorted(n.id for n in node.cpu_numa_nodes()) == sorted(set(gpu_numa))


def test_model_notes_name_the_reason() -> None:
    assert load("h100-sxm-8gpu-nvswitch-6nic.txt").notes[0] == (
        "GPU model not given; assumed H100-80GB-SXM from NV18; pass --gpu-model"
    )
    assert "as no GPU pair has NVLink" in load("l40s-4gpu-pcie-dual-socket.txt").notes[0]


def test_fallback_table_names_catalog_models() -> None:
    for rule in FALLBACK_MODELS:
        assert get_gpu_model(rule.model).name == rule.model


def test_given_model_is_used_without_a_note() -> None:
    node = load("b200-8gpu-nvswitch-16nic.txt", gpu_model="B200")
    assert node.gpu_models == ("B200",)
    assert not any("assumed" in note for note in node.notes)
    # NVLink 5: 18 links x 50 GB/s per direction.
    assert node.gpu_bandwidth_gbps(0, 1) == 900.0


def test_unknown_model_is_an_input_error() -> None:
    with pytest.raises(InputError, match="unknown GPU model"):
        load("l40s-4gpu-pcie-dual-socket.txt", gpu_model="Z9000")


def test_bandwidth_follows_the_link_class() -> None:
    node = load("h100-sxm-8gpu-nvswitch-6nic.txt")
    h100 = get_gpu_model("H100-80GB-SXM")
    assert node.gpu_bandwidth_gbps(0, 7) == 18 * h100.nvlink_gbps_per_link
    assert node.bandwidth_gbps[0][node.nic_position(0)] == h100.pcie_gbps
    assert node.bandwidth_gbps[0][0] == 0.0
    rtx = load("rtx4090-8gpu-pcie-dual-socket.txt")
    assert rtx.gpu_bandwidth_gbps(0, 1) == min(
        get_gpu_model("L40S").pcie_gbps, DEFAULT_INTER_SOCKET_GBPS
    )


def test_gh200_gpu_memory_numa_nodes() -> None:
    node = load("gh200-4gpu-node-nv6.txt")
    assert [g.memory_numa for g in node.gpus] == [4, 12, 20, 28]
    memory = [n.id for n in node.numa_nodes if n.kind is NumaKind.GPU_MEMORY]
    assert memory == [4, 12, 20, 28]
    assert node.numa_nodes[0].cpus == tuple(range(72))
    assert node.gpus[0].numa_affinity == (0, 5, 6, 7, 8, 9, 10, 11)


def test_numa_cpus_are_the_union_of_gpu_affinities() -> None:
    node = load("dgx-a100-8gpu-nvswitch-10nic.txt")
    by_id = {int(n.id): n.cpus for n in node.numa_nodes}
    assert by_id[3] == (*range(48, 64), *range(176, 192))
    assert node.gpus[0].cpu_affinity == by_id[3]


def test_numa_grouped_by_cpu_affinity_when_not_printed() -> None:
    node = load("pcie-8gpu-plx-switches-dual-socket.txt")
    assert node.numa_nodes[1].cpus == tuple(range(14, 28))
    assert "NUMA nodes numbered by CPU Affinity: 0-13 -> 0, 14-27 -> 1" in " ".join(node.notes)


def test_nic_names_come_from_the_legend_or_the_header() -> None:
    assert [n.name for n in load("l40s-4gpu-pcie-dual-socket.txt").nics] == ["mlx5_0", "mlx5_1"]
    assert [n.name for n in load("rtx4090-8gpu-pcie-dual-socket.txt").nics] == ["NIC0", "NIC1"]
    assert [n.name for n in load("dgx1-v100-hybrid-cube-mesh.txt").nics] == ["mlx5_0"]


def test_repairs_are_reported_in_one_note() -> None:
    notes = load("b200-8gpu-nvswitch-16nic.txt").notes
    repaired = [n for n in notes if "glued" in n]
    assert len(repaired) == 1 and "line 4: 'PXBNODE' -> PXB NODE" in repaired[0]


HEADER = "\tGPU0\tGPU1\tGPU2\tNIC0\tCPU Affinity\tNUMA Affinity\n"


def test_gpu_without_affinity_joins_a_gpu_it_reaches_without_sys() -> None:
    node = from_text(
        HEADER + "GPU0\t X \tPIX\tSYS\tSYS\t0-3\t2\n"
        "GPU1\tPIX\t X \tSYS\tSYS\n"
        "GPU2\tSYS\tSYS\t X \tPIX\n"
        "NIC0\tSYS\tSYS\tPIX\t X \n"
    )
    assert [g.numa for g in node.gpus] == [2, 2, 0]
    assert node.nics[0].numa == 0
    text = " ".join(node.notes)
    assert "GPU1: no CPU or NUMA affinity printed; put on NUMA 2 like GPU0" in text
    assert "GPU2: no CPU or NUMA affinity printed and no placed GPU" in text


def test_nvlink_hides_pcie_so_neighbours_are_found_through_a_nic() -> None:
    node = from_text(
        HEADER + "GPU0\t X \tNV12\tNV12\tPIX\t0-3\t1\n"
        "GPU1\tNV12\t X \tNV12\tPXB\n"
        "GPU2\tNV12\tNV12\t X \tSYS\n"
        "NIC0\tPIX\tPXB\tSYS\t X \n"
    )
    assert [g.numa for g in node.gpus] == [1, 1, 0]


def test_nic_equally_near_two_numa_nodes() -> None:
    node = from_text(
        HEADER + "GPU0\t X \tSYS\tSYS\tNODE\t0-3\t0\n"
        "GPU1\tSYS\t X \tSYS\tNODE\t4-7\t1\n"
        "GPU2\tSYS\tSYS\t X \tSYS\t4-7\t1\n"
        "NIC0\tNODE\tNODE\tSYS\t X \n"
    )
    assert node.nics[0].numa == 0
    assert "NIC0 is equally near GPUs on NUMA [0, 1]; put on 0" in node.notes


def test_other_nvlink_counts_fall_back_with_a_note() -> None:
    node = from_text("\tGPU0\tGPU1\nGPU0\t X \tNV8\nGPU1\tNV8\t X \n")
    assert node.gpu_models == ("H100-80GB-SXM",)
    assert "not in the table" in node.notes[0]
    assert not node.nvswitch


def test_more_links_than_the_model_has_is_a_note() -> None:
    node = from_text("\tGPU0\tGPU1\nGPU0\t X \tNV18\nGPU1\tNV18\t X \n", gpu_model="A100-80GB")
    assert any("NV18 is more than the 12 NVLinks" in n for n in node.notes)


def test_nvlink_on_a_model_without_nvlink_is_an_input_error() -> None:
    with pytest.raises(InputError) as info:
        from_text("\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\t X \n", gpu_model="L40S")
    assert info.value.location.line == 2 and info.value.location.field == "GPU1"


def test_gpu_columns_must_run_from_zero() -> None:
    with pytest.raises(InputError, match="GPU columns are GPU0, GPU2") as info:
        from_text("\tGPU0\tGPU2\nGPU0\t X \tSYS\nGPU2\tSYS\t X \n")
    assert info.value.location.line == 1


def test_gpu_numa_id_may_not_reuse_a_cpu_node() -> None:
    text = (
        "\tGPU0\tGPU1\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \tNV6\t0\t\t1\nGPU1\tNV6\t X \t1\t\t9\n"
    )
    with pytest.raises(InputError, match="already a NUMA node") as info:
        from_text(text)
    assert (info.value.location.line, info.value.location.field) == (2, "GPU NUMA ID")


def test_explicit_name() -> None:
    m = parse_topo_text("\tGPU0\nGPU0\t X \n", "dir/single.txt")
    assert topology_from_matrix(m).name == "single"
    assert topology_from_matrix(m, name="node-a").name == "node-a"


def test_unreadable_file_names_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.txt"
    with pytest.raises(InputError, match=r"nope\.txt: cannot read"):
        load_topology_text_file(missing)
    with pytest.raises(InputError, match="cannot read"):
        load_topology_text_file(tmp_path)


def test_undecodable_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"\tGPU0\nGPU0\t X \xff\n")
    with pytest.raises(InputError, match=r"latin1\.txt:2: not UTF-8"):
        load_topology_text_file(path)


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf\tGPU0\nGPU0\t X \n")
    assert load_topology_text_file(path).num_gpus == 1
