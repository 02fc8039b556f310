from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuplane.cli.main import run


def test_openb_json_has_the_documented_fields(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["bench", "openb", "--policy", "bestfit", "--seeds", "42", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"policy", "seeds", "unallocated_pct_at_100", "per_seed", "wall_s"} <= data.keys()
    assert data["policy"] == "bestfit" and data["seeds"] == [42]
    assert 5.0 < data["unallocated_pct_at_100"] < 9.0
    assert data["per_seed"][0]["unallocated_pct_at_100"] == data["unallocated_pct_at_100"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--policy", "tetris"], "unknown policy 'tetris'"),
        (["--seeds", "4x"], "--seeds"),
        (["--pods", "/nonexistent/pods.csv"], "pods.csv"),
    ],
)
def test_openb_bad_flags(
    args: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["bench", "openb", *args]) == 2
    assert needle in capsys.readouterr().err
