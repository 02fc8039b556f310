"""The run view and summary.json read the typed run summary."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from gpuplane.fit.workload_objects import DeploymentSpec
from gpuplane.operator.settings import OperatorSettings
from gpuplane.report.run_files import write_run
from gpuplane.report.run_view import run_summary_view
from gpuplane.twin.build import build_simulation
from gpuplane.twin.operator.node_agent import OperatorNodeAgent
from gpuplane.twin.scenario.spec import Workload
from tests.factories import make_pool, make_template


def test_the_view_and_the_file_show_the_same_run(tmp_path: Path) -> None:
    # Three 8-GPU pods on one 8-GPU node: one runs, two wait with a FailedScheduling message.
    big = DeploymentSpec(name="big", namespace="ml", template=make_template(gpus=8), replicas=3)
    sim = build_simulation(
        [make_pool(count=1)],
        [Workload("big", big)],
        seed=0,
        name="view",
        node_agent=OperatorNodeAgent(None, OperatorSettings()),
    )
    result = sim.run(60.0, steps=2)
    console = Console(record=True, width=160, file=io.StringIO())
    console.print(run_summary_view(result.summary))
    text = console.export_text()
    assert "view (seed 0, 60 s" in text
    assert "pending 2, running 1, succeeded 0, failed 0, deleted 0" in text
    assert "mode" in text and "pre-provisioned" in text
    assert "Why pods are still pending" in text and "Insufficient nvidia.com/gpu" in text
    write_run(tmp_path, result, {}, ())
    written = json.loads((tmp_path / "summary.json").read_text())
    assert written == result.summary.as_dict()
    assert written["gpu_operator"] == {"mode": "pre-provisioned", "nodes_by_state": {"ready": 1}}
