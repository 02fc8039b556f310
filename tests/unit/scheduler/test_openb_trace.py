from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.core.errors import InputError
from gpuplane.scheduler.openb.trace import load_nodes, load_pods, spec_allows, spec_models
from tests.unit.scheduler.openb_factories import DATA, NODE_CSV

POD_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_real_node_list() -> None:
    nodes = load_nodes(NODE_CSV)
    assert nodes.num_nodes == 1213
    assert nodes.total_gpus == 6212
    assert list(nodes.names) == sorted(nodes.names)
    assert "G2" in nodes.model_names and "" not in nodes.model_names


def test_pods_sorted_by_name_and_spec_kept(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "pods.csv",
        POD_HEADER + "p-b,2000,100,1,500,T4|P100,LS,Running\np-a,1000,50,0,0,,BE,Running\n",
    )
    pods = load_pods(path)
    assert pods.names == ("p-a", "p-b")
    assert pods.gpu_spec == ("", "T4|P100")
    assert pods.total_gpu_milli.tolist() == [0, 500]


def test_five_column_multigpu_files_are_unconstrained() -> None:
    pods = load_pods(DATA / "openb_pod_list_multigpu20.csv")
    assert set(pods.gpu_spec) == {""}
    assert pods.request(0, ("G2", "T4")).models is None


def test_spec_models() -> None:
    names = ("", "G2", "T4")
    assert spec_models("", names) is None
    assert spec_models("T4|V100", names) == frozenset({2})
    assert spec_models("A100", names) == frozenset()
    assert spec_allows("|", "G2") and not spec_allows("|", "")


@pytest.mark.parametrize(
    ("text", "line", "column", "expected"),
    [
        ("p,1x00,1,0,0,,a,b\n", 2, "cpu_milli", "whole number"),
        ("p,1000,1,9999,0,,a,b\n", 2, "num_gpu", "between 0 and 64"),
        ("p,1000,1,0,500,,a,b\n", 2, "gpu_milli", "0 when num_gpu is 0"),
        ("p,1000,1,2,500,,a,b\n", 2, "gpu_milli", "1000 when num_gpu > 1"),
        ("p,1000,1,1,0,,a,b\n", 2, "gpu_milli", "between 1 and 1000"),
        ("q,1,1,0,0,,a,b\np,-5,1,0,0,,a,b\n", 3, "cpu_milli", ">= 0"),
    ],
)
def test_bad_values_are_located(
    tmp_path: Path, text: str, line: int, column: str, expected: str
) -> None:
    path = write(tmp_path, "pods.csv", POD_HEADER + text)
    with pytest.raises(InputError) as info:
        load_pods(path)
    message = str(info.value)
    assert f"{path}:{line}" in message
    assert f"column {column!r}" in message
    assert expected in message


def test_missing_column(tmp_path: Path) -> None:
    path = write(tmp_path, "nodes.csv", "sn,cpu_milli,gpu,model\nn1,1,1,G2\n")
    with pytest.raises(InputError, match=r"nodes.csv:1: memory_mib: the header has no column"):
        load_nodes(path)


def test_wrong_field_count_duplicates_and_empty(tmp_path: Path) -> None:
    header = "sn,cpu_milli,memory_mib,gpu,model\n"
    short = write(tmp_path, "a.csv", header + "n1,1,1,1,G2\nn2,1,1\n")
    with pytest.raises(InputError, match=r"a.csv:3: the row has 3 fields but the header has 5"):
        load_nodes(short)
    dup = write(tmp_path, "b.csv", header + "n1,1,1,1,G2\n\nn1,2,2,1,G2\n")
    with pytest.raises(InputError, match=r"b.csv:4: column 'sn': 'n1' already appears on line 2"):
        load_nodes(dup)
    empty = write(tmp_path, "c.csv", header)
    with pytest.raises(InputError, match="no data rows"):
        load_nodes(empty)


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"missing.csv: cannot read the file"):
        load_pods(tmp_path / "missing.csv")
    binary = tmp_path / "bin.csv"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(InputError, match="UTF-8"):
        load_pods(binary)
