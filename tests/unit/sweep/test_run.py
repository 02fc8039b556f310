"""Running a sweep: every executor gives the same table, byte for byte; resume keeps finished
points and refuses rows another sweep made."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuplane.core.errors import InputError, UnavailableError
from gpuplane.sweep import (
    InProcess,
    LocalPool,
    RayPool,
    Sweep,
    SweepResult,
    load_sweep,
    run_sweep,
)
from gpuplane.sweep.bases.registry import bases
from tests.unit.sweep.sweep_factories import GRID, openb_sweep


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Sweep:
    return load_sweep(openb_sweep(tmp_path_factory.mktemp("sweep"), GRID), bases())


@pytest.fixture(scope="module")
def reference(sweep: Sweep, tmp_path_factory: pytest.TempPathFactory) -> SweepResult:
    return run_sweep(sweep, InProcess(), tmp_path_factory.mktemp("ref"))


def test_the_reference_table(reference: SweepResult) -> None:
    lines = reference.path.read_text().splitlines()
    assert lines[0] == "point,policy,trace,seed,unallocated_pct_at_100,failed_pods,arrivals"
    assert len(lines) == 13
    assert [line.split(",")[:4] for line in lines[1:4]] == [
        ["0", "bestfit", "a", "42"],
        ["1", "bestfit", "a", "43"],
        ["2", "bestfit", "a", "44"],
    ]
    assert reference.num_run == 12 and reference.num_skipped == 0
    records = reference.records()
    assert all(isinstance(r["unallocated_pct_at_100"], float) for r in records)


def test_local_pool_gives_the_same_bytes(
    sweep: Sweep, reference: SweepResult, tmp_path: Path
) -> None:
    result = run_sweep(sweep, LocalPool(workers=2), tmp_path)
    assert result.path.read_bytes() == reference.path.read_bytes()


@pytest.fixture(scope="module")
def ray_session() -> Iterator[None]:
    try:
        import ray
    except ImportError:
        pytest.skip("Ray cannot be imported here: pip install 'gpuplane[ray]'")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.usefixtures("ray_session")
def test_ray_gives_the_same_bytes(sweep: Sweep, reference: SweepResult, tmp_path: Path) -> None:
    result = run_sweep(sweep, RayPool("local", workers=2), tmp_path)
    assert result.path.read_bytes() == reference.path.read_bytes()
    assert result.num_run == len(sweep.points)


def test_without_ray_the_error_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "ray", None)
    with pytest.raises(UnavailableError, match=r"pip install 'gpuplane\[ray\]'"):
        RayPool("local")


def test_a_restart_skips_finished_points_and_drops_a_cut_line(
    sweep: Sweep, reference: SweepResult, tmp_path: Path
) -> None:
    run_sweep(sweep, InProcess(), tmp_path)
    lines = reference.path.read_text().splitlines(keepends=True)
    # Five points done in completion order, and a sixth cut short by a kill.
    kept = [lines[0], lines[4], lines[1], lines[7], lines[2], lines[9], lines[5][:6]]
    (tmp_path / "results.csv").write_text("".join(kept))
    seen: list[int] = []
    result = run_sweep(
        sweep, InProcess(), tmp_path, on_row=lambda d, t, row: seen.append(row.index)
    )
    assert result.num_skipped == 5 and result.num_run == 7
    assert sorted(seen) == [2, 4, 5, 7, 9, 10, 11]
    assert result.path.read_bytes() == reference.path.read_bytes()
    again = run_sweep(sweep, InProcess(), tmp_path)
    assert again.num_run == 0 and again.path.read_bytes() == reference.path.read_bytes()


def test_rows_of_another_sweep_are_refused(sweep: Sweep, tmp_path: Path) -> None:
    run_sweep(sweep, InProcess(), tmp_path)
    meta = json.loads((tmp_path / "sweep.json").read_text())
    (tmp_path / "sweep.json").write_text(json.dumps({**meta, "digest": "0" * 16}))
    with pytest.raises(InputError, match="made by another sweep"):
        run_sweep(sweep, InProcess(), tmp_path)
    assert run_sweep(sweep, InProcess(), tmp_path, restart=True).num_run == len(sweep.points)


def test_a_changed_input_file_changes_the_digest(tmp_path: Path) -> None:
    path = openb_sweep(tmp_path, GRID)
    first = load_sweep(path, bases()).digest
    pods = tmp_path / "openb" / "openb_pod_list_b.csv"
    pods.write_text(pods.read_text().replace(",1000\n", ",900\n", 1))
    assert load_sweep(path, bases()).digest != first


@pytest.mark.usefixtures("ray_session")
def test_ray_gives_the_same_bytes_for_the_fit_and_autoscaling_bases(tmp_path: Path) -> None:
    """The other bases travel to Ray's workers (their data in the base, pickled once) and give
    the in-process table too."""
    from tests.unit.cli.test_sweep_autoscaling import CONFIGS, FIGURES, sweep_file

    repo = Path(__file__).resolve().parents[3]
    files = [repo / "examples/sweeps/fit-tp.yaml", sweep_file(tmp_path, CONFIGS, figures=FIGURES)]
    for i, path in enumerate(files):
        sweep = load_sweep(path, bases())
        here = run_sweep(sweep, InProcess(), tmp_path / f"here{i}")
        there = run_sweep(sweep, RayPool("local", workers=2), tmp_path / f"ray{i}")
        assert there.path.read_bytes() == here.path.read_bytes()
        assert there.num_run == len(sweep.points)
