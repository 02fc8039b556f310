"""``gpuplane snapshot save --from`` and ``snapshot show`` on the example dump; usage errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplane.cli.main import run

EXAMPLE = Path(__file__).parents[3] / "examples" / "snapshot" / "cluster.yaml"


def _save(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out = tmp_path / "snap.yaml"
    assert run(["snapshot", "save", "--from", str(EXAMPLE), "--out", str(out)]) == 0
    assert f"wrote {out}: 4 nodes, 9 pods" in capsys.readouterr().err
    return out


def test_show_json_on_the_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snap = _save(tmp_path, capsys)
    assert run(["snapshot", "show", str(snap), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    models = {m["model"]: m for m in data["gpuModels"]}
    h100 = models["NVIDIA-H100-80GB-HBM3"]
    assert (h100["nodes"], h100["gpusAllocatable"], h100["gpusRequested"]) == (2, 16, 13)
    a100 = models["NVIDIA-A100-SXM4-40GB"]  # the Succeeded pod's 2 GPUs are not held
    assert (a100["nodes"], a100["gpusAllocatable"], a100["gpusRequested"]) == (1, 8, 2)
    assert data["pendingCount"] == 2
    assert [p["name"] for p in data["pending"]] == [
        "llama-405b-6f5e4d3c2-bt8wn",
        "pretrain-1-lm4vd",
    ]
    assert data["skipped"] == []


def test_show_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snap = _save(tmp_path, capsys)
    assert run(["snapshot", "show", str(snap)]) == 0
    text = capsys.readouterr().out
    assert "NVIDIA-H100-80GB-HBM3" in text
    assert "pods: 9 (6 bound and not finished, 2 pending)" in text
    assert "pending train/pretrain-1-lm4vd (8 GPU): 0/4 nodes are available:" in text
    assert "Node pools" in text and "fragmentation (FGD)" in text


def test_show_json_explains_pools_fragmentation_and_pending(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = _save(tmp_path, capsys)
    assert run(["snapshot", "show", str(snap), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    h100 = next(p for p in data["pools"] if p["product"] == "NVIDIA-H100-80GB-HBM3")
    assert h100["nodes"] == 2 and h100["gpus"] == 16 and h100["hardware"] == "dgx-h100 (guessed)"
    frag = data["fragmentation"]
    assert 0 <= frag["fragmentedGpus"] <= frag["freeGpus"]
    assert abs(sum(d["share"] for d in frag["demand"]) - 1) < 1e-6
    why = {p["pod"]: p["why"] for p in data["pendingWhy"]}
    assert why["train/pretrain-1-lm4vd"].startswith("0/4 nodes are available: ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give either --kubeconfig PATH or --from FILE_OR_DIR"),
        (["--kubeconfig", "k", "--from", "f"], "give either --kubeconfig PATH or --from"),
        (["--from", "f", "--context", "c"], "--context needs --kubeconfig"),
        (
            ["--kubeconfig", "/nonexistent/kubeconfig"],
            "/nonexistent/kubeconfig: no such kubeconfig",
        ),
    ],
)
def test_save_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert run(["snapshot", "save", *args, "--out", str(tmp_path / "s.yaml")]) == 2
    assert message in capsys.readouterr().err


def test_located_errors_reach_the_user(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Node\nmetadata: {}\n")
    assert run(["snapshot", "save", "--from", str(bad), "--out", str(tmp_path / "s.yaml")]) == 2
    assert f"{bad}:3: metadata.name: document 1: object has no metadata.name" in (
        capsys.readouterr().err
    )
    assert run(["snapshot", "show", str(bad)]) == 2
    assert "not a snapshot (v1/Node)" in capsys.readouterr().err


def test_the_client_library_is_not_loaded_by_other_commands() -> None:
    # docs/dependencies.md: only `snapshot save --kubeconfig` pays for importing the client.
    code = "import sys, gpuplane.cli.main; sys.exit('kubernetes' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], check=False, timeout=120)
    assert done.returncode == 0
