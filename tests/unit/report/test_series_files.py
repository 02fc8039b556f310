"""The tidy series files (pools, serving, autoscaling): columns, plausible values, the same
bytes from the same seed, and the report's plots of them."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import pytest

from gpuplane.cli.report import write_html_report
from gpuplane.k8s.scenario.loader import load_scenario_spec
from gpuplane.report.html.pool_view import pools_from_spec
from gpuplane.report.run_files import write_run
from gpuplane.twin.build import simulation_from_spec
from gpuplane.twin.series import SERIES_COLUMNS
from tests.unit.report.report_run import small_pools, write_small_run

EXAMPLES = Path(__file__).resolve().parents[3] / "examples/autoscaling"

Table = dict[tuple[float, str], dict[str, float]]


def _read(path: Path) -> Table:
    with path.open(encoding="utf-8") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == SERIES_COLUMNS
        table: Table = defaultdict(dict)
        for r in reader:
            table[(float(r["t_s"]), r["entity"])][r["metric"]] = float(r["value"])
    return table


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_small_run(tmp_path_factory.mktemp("small"))


@pytest.fixture(scope="module", params=["scenario.yaml", "scenario-slo.yaml"])
def serving_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    spec = load_scenario_spec(EXAMPLES / str(request.param)).spec
    result = simulation_from_spec(spec, seed=0, check_invariants=False).run(600.0)
    out = tmp_path_factory.mktemp("serving")
    write_run(out, result, {}, ())
    return out


def test_pool_rows_hold_gpus_and_fragmentation_within_the_free_gpus(small: Path) -> None:
    table = _read(small / "pools_timeseries.csv")
    assert table
    for (t, pool), m in table.items():
        assert pool == "pool" and t >= 0
        assert set(m) == {
            "gpus_allocatable",
            "gpus_allocated",
            "gpus_free",
            "fgd_fragmentation_gpus",
        }
        assert 0 <= m["gpus_allocated"] <= m["gpus_allocatable"]
        assert 0.0 <= m["fgd_fragmentation_gpus"] <= m["gpus_free"]
    assert not (small / "serving_timeseries.csv").exists()  # no serving service in this run


def test_serving_rows_have_ordered_percentiles_and_attainment_in_unit_range(
    serving_run: Path,
) -> None:
    table = _read(serving_run / "serving_timeseries.csv")
    with_latency = [m for m in table.values() if "ttft_p50_s" in m]
    assert with_latency
    for m in table.values():
        assert m["arrived_rps"] >= 0 and m["requests_ended"] >= 0
        for metric in ("ttft", "itl"):
            if f"{metric}_p50_s" in m:
                assert 0 <= m[f"{metric}_p50_s"] <= m[f"{metric}_p90_s"] <= m[f"{metric}_p99_s"]
        if "slo_attainment" in m:
            assert 0.0 <= m["slo_attainment"] <= 1.0


def test_autoscaler_rows_hold_replicas_load_and_triggers(serving_run: Path) -> None:
    table = _read(serving_run / "autoscaling_timeseries.csv")
    assert table
    seen = set().union(*table.values())
    assert {"desired_replicas", "current_replicas", "request_rate_rps", "queue_length"} <= seen
    assert any(k.startswith("trigger.") and k.endswith(".threshold") for k in seen)
    assert any(k.startswith("trigger.") and k.endswith(".value") for k in seen)
    for m in table.values():
        assert m.get("desired_replicas", 0) >= 0 and m.get("current_replicas", 0) >= 0


def test_the_report_plots_the_series(serving_run: Path, small: Path) -> None:
    html = write_html_report(serving_run, serving_run / "report.html", ()).read_text("utf-8")
    assert "TTFT and per-request ITL percentiles" in html
    assert "value against its threshold" in html
    assert "FGD expected fragmentation per pool" in html
    assert "not in this run" not in html.split('id="serving"')[1].split('id="pools"')[0]
    small_html = write_html_report(small, small / "r.html", pools_from_spec(small_pools()))
    assert "FGD expected fragmentation per pool" in small_html.read_text("utf-8")


def test_the_same_seed_gives_the_same_series_bytes(small: Path, tmp_path: Path) -> None:
    again = write_small_run(tmp_path)
    for name in ("pools_timeseries.csv", "timeseries.csv"):
        assert (again / name).read_bytes() == (small / name).read_bytes()
