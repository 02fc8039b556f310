from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpuplane.cli.main import run

REPO = Path(__file__).resolve().parents[3]
FIXTURES = sorted((REPO.parent / "shared/data/topologies").glob("*.txt"))

COMMANDS = [
    [],
    ["topo"],
    ["topo", "presets"],
    ["topo", "show"],
    ["topo", "labels"],
    ["topo", "nrt"],
    ["topo", "ring"],
    ["topo", "discover"],
    ["demo"],
    ["sweep"],
]


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: " ".join(c) or "root")
def test_help_everywhere(cmd: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert run([*cmd, "--help"]) == 0
    assert "Usage" in capsys.readouterr().out


def test_presets_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["topo", "presets", "--json"]) == 0
    names = {p["name"] for p in json.loads(capsys.readouterr().out)}
    assert {
        "dgx-h100",
        "hgx-h200",
        "hgx-b200",
        "dgx-a100",
        "dgx1-v100",
        "seed-8gpu",
        "l40s-8gpu-pcie",
        "a10-4gpu-pcie",
        "gh200-4node",
    } <= names


def test_show_json_has_the_documented_fields(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["topo", "show", "dgx-h100", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [g["index"] for g in data["gpus"]] == list(range(8))
    assert {g["numa"] for g in data["gpus"]} == {0, 1}
    assert all(g["model"] == "H100-80GB-SXM" for g in data["gpus"])
    assert data["links"][0] == ["X"] + ["NV18"] * 7
    assert len(data["nics"]) == 12 and len(data["numa_nodes"]) == 2


def test_show_picture(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["topo", "show", "seed-8gpu"]) == 0
    text = capsys.readouterr().out
    assert "NUMA 0" in text and "GPU7" in text and "SYS" in text


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_every_fixture_shows(fixture: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["topo", "show", str(fixture), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["links"]) == len(data["gpus"])


def test_labels_and_nrt(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["topo", "labels", "dgx-h100"]) == 0
    labels = dict(line.split("=", 1) for line in capsys.readouterr().out.splitlines())
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert labels["nvidia.com/gpu.count"] == "8"
    assert run(["topo", "nrt", "hgx-h200", "--node-name", "n1"]) == 0
    nrt = yaml.safe_load(capsys.readouterr().out)
    assert nrt["kind"] == "NodeResourceTopology"
    assert nrt["apiVersion"] == "topology.node.k8s.io/v1alpha2"
    assert nrt["metadata"]["name"] == "n1"
    assert len(nrt["zones"]) == 2


def test_ring(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["topo", "ring", "dgx1-v100", "--gpus", "0,1,2,3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["bottleneck_gbps"] == 25.0


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["topo", "show", "no-such-preset"], "no preset or file named 'no-such-preset'"),
        (["topo", "ring", "dgx1-v100", "--gpus", "0,0"], "--gpus '0,0'"),
        (["topo", "ring", "dgx1-v100", "--gpus", "a,b"], "expected comma-separated integers"),
        (["topo", "show", "dgx-h100", "--gpu-model", "A100"], "cannot change preset"),
        (["topo", "show", "x", "--gpu-model", "Z9000"], "no preset or file"),
        (["topo", "discover"], "NVML"),
        (["topo", "show"], "Missing argument"),
        (["topo", "frobnicate"], "No such command"),
    ],
)
def test_user_mistakes_exit_2_with_a_message(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(argv) == 2
    captured = capsys.readouterr()
    assert needle in captured.err
    assert "Traceback" not in captured.err + captured.out


def test_single_gpu_ring_has_no_bottleneck(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["topo", "ring", "dgx-h100", "--gpus", "3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["bottleneck_gbps"] is None and data["time_s"] == 0.0


def test_demo_unwritable_out_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert run(["demo", str(REPO / "examples/scenario.yaml"), "--out", str(blocker / "out")]) == 2
    assert "--out: cannot write the report" in capsys.readouterr().err


def test_bad_topo_file_is_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "topo.txt"
    bad.write_text("\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\tPXQ\n")
    assert run(["topo", "show", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:3" in err.replace("\n", "")


def test_process_exit_code_and_no_traceback(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gpuplane", "topo", "show", str(tmp_path / "missing.txt")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "missing.txt" in proc.stderr


def test_demo_writes_a_reproducible_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = str(REPO / "examples/scenario.yaml")
    assert run(["demo", scenario, "--out", str(tmp_path / "a")]) == 0
    assert run(["demo", scenario, "--out", str(tmp_path / "b")]) == 0
    for name in (
        "summary.json",
        "report.md",
        "pools/dgx1-legacy/nrt.yaml",
        "pools/h100-train/labels.txt",
        "pools/h100-della/topology.json",
    ):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    summary = json.loads((tmp_path / "a/summary.json").read_text())
    dgx1 = next(p for p in summary["pools"] if p["name"] == "dgx1-legacy")
    tp4 = next(r for r in dgx1["tensor_parallel"] if r["size"] == 4)
    assert tp4["best_bottleneck_gbps"] > tp4["worst_bottleneck_gbps"]
    h100 = next(p for p in summary["pools"] if p["name"] == "h100-train")
    assert all(r["spread"] == 1.0 for r in h100["tensor_parallel"])
    assert "report written" in capsys.readouterr().out


def test_kubelet_merge_hints_from_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    case = {
        "policy": "single-numa-node",
        "numa_nodes": [0, 1],
        "providers_hints": [{"gpu": [{"affinity": [0, 1], "preferred": True}]}],
    }
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(case)))
    assert run(["kubelet", "merge-hints"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "affinity": None,
        "preferred": False,
        "admit": False,
    }
    monkeypatch.setattr("sys.stdin", io.StringIO("[1, 2"))
    assert run(["kubelet", "merge-hints"]) == 2
    monkeypatch.setattr("sys.stdin", None)  # started with stdin closed (`<&-`)
    assert run(["kubelet", "merge-hints"]) == 2
    assert "<stdin>: standard input is closed" in capsys.readouterr().err


def test_messages_keep_line_numbers_rich_would_turn_into_emoji(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("\n" * 99 + "kind: Pod\n")  # line 100: no apiVersion
    snap = tmp_path / "snap.yaml"
    snap.write_text(
        "apiVersion: gpuplane.io/v1alpha1\nkind: ClusterSnapshot\nmetadata: {}\nobjects: {}\n"
    )
    assert run(["fit", str(bad), "--snapshot", str(snap)]) == 2
    text = capsys.readouterr().err
    assert f"{bad}:100" in text and "\U0001f4af" not in text
