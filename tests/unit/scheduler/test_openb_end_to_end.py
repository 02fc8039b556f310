"""A short run of the whole protocol, and the ``gpuplane bench openb`` command, on a small
subset of the default trace (a tenth of the nodes, a fifth of the pods)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gpuplane.cli import main as cli_main
from gpuplane.cli.bench import parse_seeds
from gpuplane.core.errors import InputError
from gpuplane.scheduler.openb.data_dir import default_data_dir
from gpuplane.scheduler.openb.experiment import run_protocol
from gpuplane.scheduler.openb.trace import NodeTable, PodTable, load_nodes, load_pods
from tests.unit.scheduler.openb_factories import DATA, NODE_CSV, subset_nodes, subset_pods


def small() -> tuple[NodeTable, PodTable]:
    nodes = load_nodes(NODE_CSV)
    pods = load_pods(DATA / "openb_pod_list_default.csv")
    return subset_nodes(nodes, range(0, 1213, 10)), subset_pods(pods, range(0, pods.num_pods, 5))


def write_csvs(tmp_path: Path) -> tuple[Path, Path]:
    nodes, pods = small()
    node_csv, pod_csv = tmp_path / "nodes.csv", tmp_path / "pods.csv"
    lines = ["sn,cpu_milli,memory_mib,gpu,model"]
    for i, name in enumerate(nodes.names):
        model = nodes.model_names[int(nodes.model[i])]
        lines.append(f"{name},{nodes.cpu_milli[i]},{nodes.mem_mib[i]},{nodes.num_gpus[i]},{model}")
    node_csv.write_text("\n".join(lines) + "\n")
    lines = ["name,cpu_milli,memory_mib,num_gpu,gpu_milli"]  # the 5-column multigpu layout
    for i, name in enumerate(pods.names):
        lines.append(
            f"{name},{pods.cpu_milli[i]},{pods.mem_mib[i]},{pods.num_gpu[i]},{pods.gpu_milli[i]}"
        )
    pod_csv.write_text("\n".join(lines) + "\n")
    return node_csv, pod_csv


def test_protocol_on_a_small_default_trace() -> None:
    nodes, pods = small()
    fgd = run_protocol(nodes, pods, "fgd", (42, 43), track_frag=True)
    again = run_protocol(nodes, pods, "fgd", (42, 43), track_frag=True)
    bestfit = run_protocol(nodes, pods, "bestfit", (42, 43))
    for result in (fgd, bestfit):
        for seed in result.seeds:
            curve = seed.unallocated_curve
            # Everything fits at low load: unallocated = 100 - arrived.
            assert np.allclose(curve[10:60], 100.0 - np.arange(10, 60), atol=0.6)
            assert seed.unallocated_pct_at_100 is not None
            assert 0.0 < seed.unallocated_pct_at_100 < 30.0
            assert seed.num_failed > 0
    assert [s.unallocated_pct_at_100 for s in fgd.seeds] == [
        s.unallocated_pct_at_100 for s in again.seeds
    ]
    assert all(s.frag_pct_at_100 is not None for s in fgd.seeds)
    assert fgd.mean_at_100 is not None and fgd.sd_at_100 is not None


def run_cli(argv: list[str]) -> int:
    assert "bench" in cli_main.COMMANDS
    return cli_main.run(["bench", *argv])


def test_cli_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    node_csv, pod_csv = write_csvs(tmp_path)
    argv = ["openb", "--nodes", str(node_csv), "--pods", str(pod_csv), "--json"]
    assert run_cli([*argv, "--policy", "dotprod", "--seeds", "42,43"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["policy"] == "dotprod" and data["seeds"] == [42, 43]
    per_seed = [s["unallocated_pct_at_100"] for s in data["per_seed"]]
    assert data["unallocated_pct_at_100"] == pytest.approx(sum(per_seed) / 2, abs=1e-4)
    assert data["wall_s"] > 0


def test_cli_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    node_csv, pod_csv = write_csvs(tmp_path)
    argv = ["openb", "--nodes", str(node_csv), "--pods", str(pod_csv), "--policy", "random"]
    assert run_cli([*argv, "--seeds", "42"]) == 0
    assert "mean ± sd" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policy", "tetris"], "unknown policy 'tetris'"),
        (["--seeds", "42,x"], "--seeds: 'x' is not a seed"),
        (["--seeds", "51-42"], "--seeds: '51-42' is not a seed"),
        (["--pods", "/nonexistent/pods.csv"], "/nonexistent/pods.csv: cannot read the file"),
    ],
)
def test_cli_errors_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["openb", *args, "--json"]) == 2
    assert message in capsys.readouterr().err


def test_bad_csv_exits_2_with_its_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "pods.csv"
    bad.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,100,1,1,1200\n")
    assert run_cli(["openb", "--pods", str(bad), "--json"]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2: column 'gpu_milli'" in err and "between 1 and 1000" in err


def test_default_data_and_seed_ranges() -> None:
    assert default_data_dir() == DATA
    assert parse_seeds("42-44,50") == (42, 43, 44, 50)
    with pytest.raises(InputError):
        parse_seeds("")
