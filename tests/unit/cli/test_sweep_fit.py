"""The sweep's ``fit`` base: a point answers as ``gpuplane fit`` answers the changed workload,
the pool gives the in-process table, and every mistake is located in the sweep file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from gpuplane.cli.main import run
from gpuplane.sweep import InProcess, LocalPool, load_sweep, run_sweep
from gpuplane.sweep.bases.registry import bases
from gpuplane.sweep.engine.paths import get_path, set_path

REPO = Path(__file__).resolve().parents[3]
SNAP = REPO / "examples" / "snapshot"
EXAMPLE = REPO / "examples" / "sweeps" / "fit-tp.yaml"
GPU_PATH = "[qwen-72b].spec.template.spec.containers[vllm].resources.limits[nvidia.com/gpu]"


def fit_sweep(tmp_path: Path, parameters: str, rest: str = "", base: str = "") -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(
        "name: f\nbase:\n  fit:\n"
        f"    snapshot: {SNAP / 'mixed-cluster.snapshot.yaml'}\n"
        f"    workload: {SNAP / 'workloads' / 'tp4-fits.yaml'}\n"
        f"    pools: {SNAP / 'pools.yaml'}\n"
        f"{base}"
        f"parameters:\n{parameters}{rest}"
    )
    return path


def fit_json(workload: Path, capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    snapshot = str(SNAP / "mixed-cluster.snapshot.yaml")
    pools = str(SNAP / "pools.yaml")
    argv = ["fit", str(workload), "--snapshot", snapshot, "--pools", pools, "--json", *args]
    assert run(argv) == 0
    answer = json.loads(capsys.readouterr().out)
    assert isinstance(answer, dict)
    return answer


def test_a_point_is_the_answer_fit_gives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert run(["sweep", str(EXAMPLE), "--workers", "1", "--out", str(out), "--no-plots"]) == 0
    capsys.readouterr()
    rows = (out / "results.csv").read_text().splitlines()
    assert rows[0] == (
        "point,replicas,gpus,profile,all_fit,placed,unschedulable,nodes_used,"
        "min_bottleneck_gbps,capacity"
    )
    assert len(rows) == 25
    # The same question asked of `gpuplane fit` with the workload file changed by hand.
    docs = list(yaml.safe_load_all((SNAP / "workloads" / "tp4-fits.yaml").read_text()))
    docs[0]["spec"]["replicas"] = 3
    docs[0]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"][
        "nvidia.com/gpu"
    ] = 2
    changed = tmp_path / "w.yaml"
    changed.write_text(yaml.safe_dump_all(docs))
    answer = fit_json(changed, capsys, "--no-remedies")
    counts = answer["counts"]
    assert isinstance(counts, dict)
    row = next(r for r in rows if r.startswith("12,"))  # replicas=3, gpus=2, default
    placed = counts["fits"] + counts["fits-after-preemption"]
    assert row.split(",")[:8] == [
        "12",
        "3",
        "2",
        "default",
        "true" if answer["allFit"] else "false",
        str(placed),
        str(counts["unschedulable"]),
        "1",
    ]
    assert placed == 2 and counts["unschedulable"] == 1  # only one free 4-GPU hole


def test_the_local_pool_gives_the_in_process_table(tmp_path: Path) -> None:
    sweep = load_sweep(EXAMPLE, bases())
    run_sweep(sweep, InProcess(), tmp_path / "here")
    run_sweep(sweep, LocalPool(workers=2), tmp_path / "pool")
    here = (tmp_path / "here" / "results.csv").read_bytes()
    assert here == (tmp_path / "pool" / "results.csv").read_bytes()


def test_a_snapshot_knob_asks_each_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "bigger.yaml"
    data = yaml.safe_load((SNAP / "mixed-cluster.snapshot.yaml").read_text())
    data["objects"]["pods"] = []  # a second cluster: the same nodes, empty
    other.write_text(yaml.safe_dump(data))
    snap = str(SNAP / "mixed-cluster.snapshot.yaml")
    path = fit_sweep(
        tmp_path,
        f"  snapshot: {{values: [{snap}, {other}]}}\n"
        "  replicas: {path: '[qwen-72b].spec.replicas', values: [4]}\n",
        "figures: [placed, counts.unschedulable, nodes_used]\n",
    )
    out = tmp_path / "o"
    assert run(["sweep", str(path), "--workers", "1", "--out", str(out), "--no-plots"]) == 0
    rows = [r.split(",") for r in (out / "results.csv").read_text().splitlines()[1:]]
    assert int(rows[1][3]) > int(rows[0][3])  # more pods placed on the empty nodes
    assert "error" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("parameters", "rest", "where", "words"),
    [
        ("  x: {values: [1]}\n", "", "parameters.x", "the fit base has no knob 'x'"),
        (
            "  r: {path: '[nope].spec.replicas', values: [1]}\n",
            "",
            "parameters.r.values[0]",
            "'[nope]' picks no document of the workload",
        ),
        (
            "  r: {path: '[qwen-72b].spec.replicas', values: [2, -1]}\n",
            "",
            "parameters.r.values[1]",
            "the workload with these values is refused",
        ),
        (
            f"  g: {{path: '{GPU_PATH}', values: [a]}}\n",
            "",
            "parameters.g.values[0]",
            "the workload with these values is refused",
        ),
        ("  profile: {values: [default, fgd]}\n", "", "parameters.profile.values[1]", "fgd"),
        (
            "  message_mib: {values: [-1]}\n",
            "",
            "parameters.message_mib.values[0]",
            "greater than or equal to 0",
        ),
        (
            "  snapshot: {values: [missing.yaml]}\n",
            "",
            "parameters.snapshot.values[0]",
            "the snapshot missing.yaml is refused",
        ),
        (
            "  r: {path: '[qwen-72b]', values: [1]}\n",
            "",
            "parameters.r.path",
            "names a whole document",
        ),
        (
            "  r: {keda: {scaled_object: a, path: spec.x}, values: [1]}\n",
            "",
            "parameters.r.keda",
            "the fit base has no ScaledObject",
        ),
        (
            "  profile: {values: [default]}\n",
            "figures: [gpus.x]\n",
            "figures[0]",
            "'gpus.x' is not a figure of a fit answer",
        ),
    ],
)
def test_mistakes_are_located(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    parameters: str,
    rest: str,
    where: str,
    words: str,
) -> None:
    path = fit_sweep(tmp_path, parameters, rest)
    assert run(["sweep", str(path), "--list"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{path}:" in err and where in err and words in err
    assert "Traceback" not in err


def test_base_settings_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = fit_sweep(tmp_path, "  profile: {values: [default]}\n", base="    remedies: 3\n")
    assert run(["sweep", str(path), "--list"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "base.fit.remedies" in err
    missing = tmp_path / "w"
    missing.mkdir()
    shutil.copy(SNAP / "workloads" / "tp4-fits.yaml", missing / "ok.yaml")
    path.write_text(path.read_text().replace("    remedies: 3\n", ""))
    text = path.read_text().replace(str(SNAP / "workloads" / "tp4-fits.yaml"), "nothere.yaml")
    path.write_text(text)
    assert run(["sweep", str(path), "--list"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "base.fit.workload" in err and "nothere.yaml" in err


def test_bracketed_keys_reach_keys_with_dots() -> None:
    data = {"limits": {"nvidia.com/gpu": 4, "cpu": "2"}}
    assert get_path(data, "limits[nvidia.com/gpu]", "f") == 4
    changed = set_path(data, "limits[nvidia.com/gpu]", 8, "f")
    assert changed == {"limits": {"nvidia.com/gpu": 8, "cpu": "2"}}
    assert set_path(data, "limits[memory]", "1Gi", "f")["limits"]["memory"] == "1Gi"
    assert data["limits"]["nvidia.com/gpu"] == 4  # a copy


def test_a_missing_optional_file_is_told_at_its_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = fit_sweep(tmp_path, "  profile: {values: [default]}\n")
    path.write_text(path.read_text().replace(str(SNAP / "pools.yaml"), "nothere.yaml"))
    assert run(["sweep", str(path), "--list"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{path}:6: base.fit.pools: cannot read nothere.yaml" in err
