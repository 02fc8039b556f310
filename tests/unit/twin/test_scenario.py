from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.core.errors import InputError
from gpuplane.k8s.scenario.files import pool_topology_ref
from gpuplane.twin.scenario.schema import load_scenario

REPO = Path(__file__).resolve().parents[3]


def test_example_scenario_loads() -> None:
    path = REPO / "examples/scenario.yaml"
    scenario = load_scenario(path)
    assert len(scenario.node_pools) >= 8
    della = next(p for p in scenario.node_pools if p.topology_file)
    assert Path(pool_topology_ref(della, path)).exists()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "name: x\nnode_pools:\n  - name: a\n    preset: dgx-h100\n    count: 0\n",
            ":5: node_pools[0].count: got 0; expected greater than or equal to 1",
        ),
        (
            "name: x\nnode_pools:\n  - name: a\n    count: 1\n",
            ":3: node_pools[0]: give exactly one of preset or topology_file",
        ),
        (
            "name: x\nnode_pools:\n  - name: a\n    preset: p\n    count: 1\n    colour: red\n",
            ":6: node_pools[0].colour: unknown key 'colour' (not a field of NodePool)",
        ),
        (
            "name: x\nnode_pools:\n  - name: Bad_Name\n    preset: p\n    count: 1\n",
            ":3: node_pools[0].name: 'Bad_Name' is not a DNS label",
        ),
        (
            "name: x\nnode_pools:\n  - {name: a, preset: p, count: 1}\n"
            "  - {name: a, preset: p, count: 1}\n",
            "node pool names must be unique; repeated: a",
        ),
        ("name: x\nnode_pools: []\n", ":2: node_pools: List should have at least 1 item"),
        (
            "name: x\njobs: []\nnode_pools:\n  - {name: a, preset: p, count: 1}\n",
            ":2: jobs: unknown key 'jobs'",
        ),
    ],
)
def test_bad_scenarios_are_located(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_scenario(path)
    assert str(path) in str(info.value)
    assert expected in str(info.value)


def test_missing_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        load_scenario(tmp_path / "nope.yaml")
    bad = tmp_path / "bin.yaml"
    bad.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(InputError, match=r"bin.yaml:1: not UTF-8: byte 0xff at byte offset 0"):
        load_scenario(bad)
