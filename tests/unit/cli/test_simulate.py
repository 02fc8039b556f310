from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuplane.cli.main import run

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = str(REPO / "examples/scenario.yaml")


def test_same_seed_gives_byte_identical_files(tmp_path: Path) -> None:
    for name in ("a", "b"):
        assert (
            run(
                ["simulate", EXAMPLE, "--seed", "5", "--until", "6h", "--out", str(tmp_path / name)]
            )
            == 0
        )
    for f in ("summary.json", "events.jsonl", "timeseries.csv", "resolved-config.yaml"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f
    assert (
        run(["simulate", EXAMPLE, "--seed", "6", "--until", "6h", "--out", str(tmp_path / "c")])
        == 0
    )
    assert (tmp_path / "a/events.jsonl").read_bytes() != (tmp_path / "c/events.jsonl").read_bytes()


def test_example_run_shows_every_part(tmp_path: Path) -> None:
    assert (
        run(["simulate", EXAMPLE, "--until", "8h", "--out", str(tmp_path), "--check-invariants"])
        == 0
    )
    summary = json.loads((tmp_path / "summary.json").read_text())
    reasons = summary["events_by_reason"]
    # GPU Operator lifecycle, the driver upgrade, faults, controllers and the scheduler all acted.
    for reason in (
        "GPUDriverUpgrade",
        "NodeNotSchedulable",
        "GpuXidError",
        "NodeNotReady",
        "SuccessfulCreate",
        "Scheduled",
        "FailedScheduling",
    ):
        assert reasons.get(reason, 0) > 0, reason
    op = summary["gpu_operator"]
    assert op["nodes_by_upgrade_state"] == {"upgrade-done": summary["nodes"]["total"]}
    assert op["upgrade_controller"]["max_nodes_in_progress"] <= 2
    assert {d["name"]: d["ready"] for d in summary["deployments"]} == {
        "inference/embeddings": 6,
        "inference/vllm-llama-70b": 4,
        "inference/mig-chat": 4,  # served after the MIG planner repartitioned the A100s
        "inference/mig-rerank": 6,
        "research/notebooks": 12,  # time-sliced L40S replicas
        "inference/tp2-dra": 3,  # GPUs from DRA claims on the seed-dra node
    }
    assert summary["pods"]["gpu_slicing"]["mig_reconfigurations"] >= 1
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert all({"t_s", "object", "type", "reason", "message"} <= e.keys() for e in events)
    assert events == sorted(events, key=lambda e: e["t_s"])
    header = (tmp_path / "timeseries.csv").read_text().splitlines()[0]
    assert header.startswith("t_s,nodes,nodes_ready,nodes_gpu_ready")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--until", "forever"], "--until: 'forever' is not a duration"),
        (["--until", "0s"], "is not a positive duration"),
        (["--seed", "-1"], "Invalid value for '--seed'"),
    ],
)
def test_bad_flags(
    args: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["simulate", EXAMPLE, "--out", str(tmp_path), *args]) == 2
    assert needle in capsys.readouterr().err


def test_bad_scenario_is_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "s.yaml"
    bad.write_text(
        "name: x\nnode_pools:\n  - {name: a, preset: seed-8gpu, count: 1}\nworkloads:\n"
        "  - manifest:\n      apiVersion: batch/v1\n      kind: Job\n      metadata: {name: j}\n"
        "      spec:\n        template:\n          spec:\n            restartPolicy: Never\n"
        "            containers:\n              - name: c\n                resources:\n"
        "                  limits: {nvidia.com/gpu: 1.5}\n"
        "    duration: {fixed: 1h}\n"
    )
    assert run(["simulate", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.replace("\n", "")
    assert f"{bad}:16" in err
    assert "workloads[0].manifest.spec.template.spec.containers[0].resources.limits" in err
