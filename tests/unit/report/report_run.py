"""A small twin run written to a directory, for the report and trace tests."""

from __future__ import annotations

from pathlib import Path

from gpuplane.fit.workload_objects import DeploymentSpec
from gpuplane.operator.settings import OperatorSettings
from gpuplane.report.run_files import write_run
from gpuplane.twin.build import build_simulation
from gpuplane.twin.operator.node_agent import OperatorNodeAgent
from gpuplane.twin.scenario.spec import NodePoolSpec, Workload
from tests.factories import make_pool, make_template


def small_pools() -> list[NodePoolSpec]:
    return [make_pool(count=2)]


def write_small_run(out_dir: Path) -> Path:
    """Two 8-GPU nodes brought up by the GPU Operator; five 4-GPU pods, one left pending."""
    web = DeploymentSpec(name="tp4", namespace="ml", template=make_template(gpus=4), replicas=5)
    sim = build_simulation(
        small_pools(),
        [Workload("tp4", web)],
        seed=0,
        name="report-test",
        node_agent=OperatorNodeAgent(None, OperatorSettings()),
    )
    result = sim.run(1800.0)
    write_run(
        out_dir,
        result,
        {"node_pools": [{"name": "pool", "preset": "seed-8gpu", "count": 2}]},
        ("a warning to show",),
    )
    return out_dir
