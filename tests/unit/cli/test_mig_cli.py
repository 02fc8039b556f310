from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuplane.cli import main as cli_main

REGISTERED = "mig" in cli_main.COMMANDS
assert REGISTERED, "the sub-command must be registered in cli/main.py"


def run_mig(args: list[str]) -> int:
    """The CLI entry point (its error boundary included)."""
    return cli_main.run(args)


def json_of(capsys: pytest.CaptureFixture[str], args: list[str]) -> Any:
    assert run_mig(args) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    "cmd", [[], ["profiles"], ["layouts"], ["plan"], ["check-config"], ["defaults"], ["resources"]]
)
def test_help(cmd: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert run_mig(["mig", *cmd, "--help"]) == 0
    assert "Usage" in capsys.readouterr().out


def test_plan_json(capsys: pytest.CaptureFixture[str]) -> None:
    data = json_of(
        capsys,
        [
            "mig",
            "plan",
            "--gpu",
            "A100-80GB",
            "--count",
            "4",
            "--demand",
            "1g.10gb=7,3g.40gb=2",
            "--json",
        ],
    )
    assert data["gpus_used"] == 2 and data["lower_bound"] == 2 and data["optimal"] is True
    assert data["unplaced"] == {"1g.10gb": 0, "3g.40gb": 0}
    assert data["reconfigured"] == 2 and data["evicted"] == 0
    assert data["status"] == "optimal" and data["verified"] is False and data["notes"]
    assert [x["gpu"] for x in data["layouts"]] == [0, 1, 2, 3]
    first = data["layouts"][0]
    assert set(first["instances"][0]) == {"profile", "start", "in_use"}
    placed = sum(sum(x["serves"].values()) for x in data["layouts"])
    assert placed == 9
    assert [s["name"] for s in data["stages"]] == ["placed", "gpus_used", "reconfigured", "evicted"]


def test_plan_with_current_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    current = tmp_path / "current.yaml"
    current.write_text(
        "gpus:\n"
        "  - index: 0\n"
        "    instances:\n"
        "      - {profile: 3g.40gb, start: 4, in_use: true}\n"
        "      - {profile: 3g.40gb, start: 0}\n"
        "  - index: 2\n"
        "    model: NVIDIA H100 80GB HBM3\n"
        "    instances: [{profile: 7g.80gb, start: 0, in_use: true}]\n"
    )
    data = json_of(
        capsys,
        [
            "mig",
            "plan",
            "--gpu",
            "H100-80GB",
            "--count",
            "3",
            "--current",
            str(current),
            "--demand",
            "3g.40gb=1",
            "--json",
        ],
    )
    assert data["gpus_used"] == 2 and data["reconfigured"] == 0 and data["evicted"] == 0
    gpu0 = data["layouts"][0]
    assert {"profile": "3g.40gb", "start": 4, "in_use": True} in gpu0["instances"]
    assert gpu0["serves"] == {"3g.40gb": 2}
    # JSON works too, and the count defaults to the file's GPUs
    as_json = tmp_path / "current.json"
    as_json.write_text(
        json.dumps(
            {
                "gpus": [
                    {
                        "model": "A100-40GB",
                        "instances": [{"profile": "1g.5gb", "start": 6, "in_use": True}],
                    }
                ]
            }
        )
    )
    data = json_of(capsys, ["mig", "plan", "--current", str(as_json), "--allow-evict", "--json"])
    assert data["gpus_used"] == 1 and len(data["layouts"]) == 1


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            "gpus:\n  - instances:\n      - {profile: 3g.40gb, start: 2}\n",
            "cur.yaml:3: gpus[0].instances[0]",
        ),
        (
            "gpus:\n  - instances:\n      - {profile: 3g.40gb, start: 0}\n"
            "      - {profile: 2g.20gb, start: 2}\n",
            "cur.yaml:4: gpus[0].instances[1]",
        ),
        (
            "gpus:\n  - instances:\n      - {profile: 3g.40gb, strat: 0}\n",
            "cur.yaml:3: gpus[0].instances[0].strat",
        ),
        ("gpus:\n  - index: 9\n", "cur.yaml:2: gpus[0].index"),
        ("gpus:\n  - model: L40S\n", "cur.yaml:2: gpus[0].model"),
        ("gpus:\n  - index: 1\n  - index: 1\n", "cur.yaml:3: gpus[1]"),
        ("gpus: [\n", "cur.yaml:"),
    ],
)
def test_bad_current_file_is_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, where: str
) -> None:
    path = tmp_path / "cur.yaml"
    path.write_text(text)
    code = run_mig(["mig", "plan", "--gpu", "H100-80GB", "--count", "2", "--current", str(path)])
    assert code == 2
    assert where in capsys.readouterr().err.replace(str(tmp_path) + "/", "")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--demand", "1g.5gb=1"], "--demand: profile '1g.5gb'"),
        (["--demand", "1g.10gb"], "PROFILE=COUNT"),
        (["--demand", "1g.10gb=x"], "PROFILE=COUNT"),
        (["--mode", "fast"], "--mode"),
    ],
)
def test_bad_flags_exit_2(capsys: pytest.CaptureFixture[str], args: list[str], words: str) -> None:
    assert run_mig(["mig", "plan", "--gpu", "H100-80GB", "--count", "2", *args]) == 2
    assert words in capsys.readouterr().err


def test_unknown_gpu_lists_models(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_mig(["mig", "profiles", "--gpu", "X1"]) == 2
    assert "H200-141GB" in capsys.readouterr().err
    assert run_mig(["mig", "plan", "--gpu", "A100-40GB"]) == 2
    assert "--count" in capsys.readouterr().err


def test_plan_reports_unplaced(capsys: pytest.CaptureFixture[str]) -> None:
    data = json_of(
        capsys, ["mig", "plan", "--gpu", "H200", "--count", "1", "--demand", "7g.141gb=2", "--json"]
    )
    assert data["unplaced"] == {"7g.141gb": 1} and data["gpus_used"] == 1
    assert run_mig(["mig", "plan", "--gpu", "H200", "--count", "1", "--demand", "7g.141gb=2"]) == 0
    assert "unplaced: 1 x 7g.141gb" in capsys.readouterr().out


def test_profiles_and_layouts(capsys: pytest.CaptureFixture[str]) -> None:
    data = json_of(capsys, ["mig", "profiles", "--gpu", "NVIDIA B200", "--json"])
    assert data["gpu"] == "B200" and data["verified"] is False and "unverified_note" in data
    assert data["profiles"][0]["name"] == "7g.180gb"
    data = json_of(capsys, ["mig", "layouts", "--gpu", "A100-40GB", "--json"])
    assert data["count"] == data["total_layouts"] == len(data["layouts"]) == 2319
    assert data["verified"] is True
    data = json_of(capsys, ["mig", "layouts", "--gpu", "A100-40GB", "--maximal", "--json"])
    assert data["count"] == 239 and all(row["maximal"] for row in data["layouts"])
    assert run_mig(["mig", "layouts", "--gpu", "A100-40GB", "--maximal"]) == 0
    assert "7g.40gb@0" in capsys.readouterr().out
    assert run_mig(["mig", "profiles", "--gpu", "H100-80GB"]) == 0
    assert "nvidia.com/mig-1g.10gb.me" in capsys.readouterr().out


def test_defaults_then_check_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_mig(["mig", "defaults", "--gpu", "H100-80GB"]) == 0
    path = tmp_path / "default.yaml"
    path.write_text(capsys.readouterr().out)
    data = json_of(capsys, ["mig", "check-config", str(path), "--gpu", "H100-80GB", "--json"])
    assert data["valid"] is True
    balanced = next(e for e in data["entries"] if e["config"] == "all-balanced")
    assert balanced["layout"][-1] == {"profile": "3g.40gb", "start": 4}
    # the H100 file does not suit an A100-40GB, whose 1g.10gb is the double-memory 1g (4 fit)
    assert run_mig(["mig", "check-config", str(path), "--gpu", "A100-40GB"]) == 2
    error = capsys.readouterr().err
    assert "mig-configs.all-1g.10gb[0].mig-devices" in error
    assert "7x 1g.10gb do not fit on one A100-40GB" in error


def test_check_config_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "version: v1\nmig-configs:\n  x:\n    - devices: all\n"
        '      mig-enabled: true\n      mig-devices: {"3g.40gb": 3}\n'
    )
    assert run_mig(["mig", "check-config", str(path), "--gpu", "H100-80GB"]) == 2
    assert "bad.yaml:6: mig-configs.x[0].mig-devices" in capsys.readouterr().err
    assert run_mig(["mig", "check-config", str(tmp_path / "missing.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_resources(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    current = tmp_path / "node.yaml"
    current.write_text(
        "gpus:\n  - instances: [{profile: 3g.20gb, start: 0}, {profile: 3g.20gb, start: 4}]\n"
    )
    data = json_of(
        capsys,
        [
            "mig",
            "resources",
            "--gpu",
            "A100-40GB",
            "--count",
            "2",
            "--current",
            str(current),
            "--strategy",
            "mixed",
            "--json",
        ],
    )
    # GPU 1 is MIG-enabled with no instances: the plugin refuses to start
    assert data["error"] and data["resources"] == {}
    data = json_of(
        capsys,
        [
            "mig",
            "resources",
            "--gpu",
            "A100-40GB",
            "--count",
            "1",
            "--current",
            str(current),
            "--strategy",
            "single",
            "--json",
        ],
    )
    assert data["resources"] == {"nvidia.com/gpu": 2}
    assert data["labels"]["nvidia.com/gpu.product"].endswith("-MIG-3g.20gb")
    assert (
        run_mig(["mig", "resources", "--gpu", "A100-40GB", "--count", "1", "--strategy", "double"])
        == 2
    )


def test_through_main_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        cli_main.run(
            ["mig", "plan", "--gpu", "A100-80GB", "--count", "2", "--demand", "3g.40gb=2", "--json"]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["gpus_used"] == 1 and data["lower_bound"] == 1
    assert (
        cli_main.run(["mig", "plan", "--gpu", "A100-80GB", "--count", "2", "--demand", "9g.1gb=1"])
        == 2
    )
    assert "--demand" in capsys.readouterr().err
    assert cli_main.run(["mig", "profiles", "--gpu", "H100", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["gpu"] == "H100-80GB"
