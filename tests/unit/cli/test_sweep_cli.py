"""``gpuplane sweep``: a whole run (summary, table, plots), the scenario base's targets and
figures, and the mistakes that end in exit code 2 with their place."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.cli.main import run
from gpuplane.sweep import load_sweep
from gpuplane.sweep.bases.registry import bases
from tests.unit.sweep.sweep_factories import GRID, openb_sweep

SCENARIO = (
    "name: tiny\nnode_pools:\n  - {name: a, preset: seed-8gpu, count: 1}\nworkloads:\n"
    "  - manifest:\n      apiVersion: batch/v1\n      kind: Job\n      metadata: {name: j}\n"
    "      spec:\n        parallelism: 2\n        completions: 4\n        template:\n"
    "          spec:\n            restartPolicy: Never\n            containers:\n"
    "              - name: c\n                resources:\n"
    "                  limits: {nvidia.com/gpu: 2}\n"
    "    duration: {fixed: 10m}\n"
)


def scenario_sweep(tmp_path: Path, parameters: str, figures: str) -> Path:
    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    path = tmp_path / "sweep.yaml"
    path.write_text(
        "name: tiny\nbase:\n  scenario: {file: scenario.yaml, until: 30m}\n"
        f"parameters:\n{parameters}figures: {figures}\n"
    )
    return path


def test_a_whole_sweep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra = (
        "objectives: {unallocated_pct_at_100: min, arrivals: max}\n"
        "pareto: [[unallocated_pct_at_100, arrivals]]\n"
    )
    path = openb_sweep(tmp_path, GRID, extra)
    out = tmp_path / "out"
    assert run(["sweep", str(path), "--workers", "1", "--out", str(out)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "sweep small: 12 points (12 run now, 0 kept from an earlier run)" in text
    assert "best points (min unallocated_pct_at_100, max arrivals)" in text
    assert "Pareto front: unallocated_pct_at_100 vs arrivals" in text
    plots = sorted(p.name for p in (out / "plots").iterdir())
    assert "unallocated_pct_at_100--vs--policy.svg" in plots
    assert "pareto--unallocated_pct_at_100--arrivals.svg" in plots
    assert len(plots) == 3 * 3 + 1
    svg = (out / "plots" / "unallocated_pct_at_100--vs--seed.svg").read_text()
    assert svg.startswith("<svg") and "unallocated_pct_at_100" in svg
    assert run(["sweep", str(path), "--workers", "1", "--out", str(out), "--no-plots"]) == 0
    assert "(0 run now, 12 kept from an earlier run)" in " ".join(capsys.readouterr().out.split())


def test_list_prints_the_points(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["sweep", str(openb_sweep(tmp_path, GRID)), "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "0: policy=bestfit, trace=a, seed=42"
    assert lines[-1] == "11: policy=packing, trace=b, seed=44"


def test_a_bad_sweep_file_is_exit_2_with_its_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = openb_sweep(tmp_path, GRID.replace("packing", "pakcing"))
    assert run(["sweep", str(path)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{path}:5: parameters.policy.values[1]: unknown policy 'pakcing'" in err


def test_ray_without_ray_says_how_to_get_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(__import__("sys").modules, "ray", None)
    assert run(["sweep", str(openb_sweep(tmp_path, GRID)), "--ray", "local"]) == 2
    assert "pip install 'gpuplane[ray]'" in " ".join(capsys.readouterr().err.split())


def test_scenario_paths_and_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = scenario_sweep(
        tmp_path,
        "  completions: {path: 'workloads[0].manifest.spec.completions', values: [2, 6]}\n",
        "[gpus.allocated_gpu_hours, jobs.complete, pods.created]",
    )
    out = tmp_path / "out"
    assert run(["sweep", str(path), "--workers", "1", "--out", str(out), "--no-plots"]) == 0
    lines = (out / "results.csv").read_text().splitlines()
    assert lines[0] == "point,completions,gpus.allocated_gpu_hours,jobs.complete,pods.created"
    two, six = (line.split(",") for line in lines[1:])
    assert (two[1], two[4], six[1], six[4]) == ("2", "2", "6", "6")  # one pod per completion
    assert float(six[2]) > float(two[2]) > 0


def test_scenario_value_errors_are_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = scenario_sweep(
        tmp_path, "  count: {path: 'node_pools[a].count', values: [1, 0]}\n", "[jobs.complete]"
    )
    assert run(["sweep", str(path)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{path}:5: parameters.count.values[1]: the scenario with these values is refused" in err
    assert "node_pools[0].count: got 0" in err
    path.write_text(path.read_text().replace("node_pools[a]", "node_pools[b]"))
    assert run(["sweep", str(path)]) == 2
    assert "no '[b]' under 'node_pools'; expected an index 0-0 or [NAME] of a" in " ".join(
        capsys.readouterr().err.split()
    )


def test_a_figure_that_is_not_a_number_stops_at_the_first_point(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = scenario_sweep(tmp_path, "  seed: {values: [1, 2]}\n", "[gpus]")
    assert run(["sweep", str(path), "--workers", "1", "--out", str(tmp_path / "o")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "point 0 (seed=1): figures[0]: 'gpus' is a dict in the run's summary" in err


def test_keda_targets_change_the_scaled_object() -> None:
    path = Path(__file__).resolve().parents[3] / "examples/sweeps/keda-thresholds.yaml"
    sweep = load_sweep(path, bases())
    base = sweep.base
    point = sweep.points[-1]
    loaded = base.load(point.params, base.targets, "x")  # type: ignore[attr-defined]
    (so,) = loaded.spec.scaled_objects
    assert [t.metadata["threshold"] for t in so.spec.triggers] == [
        str(point.value("queue_threshold")),
        str(point.value("kv_threshold")),
    ]
