"""The component protocol: start in list order, every event observed, sections by type."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from gpuplane.core.kernel import EventHandle
from gpuplane.fit.workload_objects import DeploymentSpec
from gpuplane.twin.build import build_simulation
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.component import Component
from gpuplane.twin.kubelet.simulator import KubeletSim
from gpuplane.twin.operator.summary import OperatorSummary
from gpuplane.twin.scenario.settings import TwinSettings
from gpuplane.twin.scenario.spec import Workload
from gpuplane.twin.serving.runtime import ServingRuntime
from gpuplane.twin.simulation import Simulation
from tests.factories import make_pool, make_template


class Recorder(Component):
    """Schedules one event at t = 1 (same priority for every recorder) and logs its hooks."""

    def __init__(self, cluster: Cluster, name: str, log: list[str]) -> None:
        self.c, self.name, self.log = cluster, name, log

    def start(self, until_s: float) -> None:
        self.log.append(f"start {self.name}")
        self.c.loop.schedule(
            1.0, lambda: self.log.append(f"event {self.name}"), priority=30, label=self.name
        )

    def stop(self, until_s: float) -> None:
        self.log.append(f"stop {self.name}")


class Watcher(Component):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def after_event(self, handle: EventHandle) -> None:
        self.seen.append(handle.label)


@dataclass(frozen=True)
class Stray:
    def as_dict(self) -> object:
        return {}


class Reports(Component):
    def __init__(self, section: object) -> None:
        self.section = section

    def summary(self) -> Any:  # deliberately any value: Stray must reach the placement check
        return self.section


def test_components_start_in_list_order_which_breaks_same_time_ties() -> None:
    cluster, log = Cluster(TwinSettings(), seed=0), list[str]()
    watcher = Watcher()
    parts = [Recorder(cluster, "b", log), Recorder(cluster, "a", log), watcher]
    result = Simulation(cluster, parts, name="t", placement="none").run(5.0)
    assert log == ["start b", "start a", "event b", "event a", "stop b", "stop a"]
    assert watcher.seen == ["b", "a"]
    assert result.num_events == 2
    assert result.timeseries == ()  # no metrics sampler in this list


def test_sections_are_placed_by_type_and_unknown_ones_are_refused() -> None:
    operator = OperatorSummary("pre-provisioned", {"ready": 0})
    cluster = Cluster(TwinSettings(), seed=0)
    summary = Simulation(cluster, [Reports(operator)], name="t", placement="p").run(1.0).summary
    assert summary.gpu_operator is operator and summary.serving is None
    assert summary.as_dict()["gpu_operator"] == {
        "mode": "pre-provisioned",
        "nodes_by_state": {"ready": 0},
    }
    with pytest.raises(TypeError, match="no place for a Stray"):
        Simulation(cluster, [Reports(Stray())], name="t", placement="p").run(2.0)


def test_a_built_twin_lists_its_parts_and_writes_todays_summary_keys() -> None:
    serve = DeploymentSpec(name="serve", namespace="ml", template=make_template(gpus=1), replicas=2)
    sim = build_simulation([make_pool(count=1)], [Workload("serve", serve)], seed=1)
    assert isinstance(sim.component(KubeletSim), KubeletSim)
    with pytest.raises(LookupError, match="no ServingRuntime"):
        sim.component(ServingRuntime)
    result = sim.run(120.0, steps=3)
    summary = result.summary
    assert list(summary.as_dict()) == [
        "scenario",
        "seed",
        "until_s",
        "placement",
        "events_processed",
        "nodes",
        "gpus",
        "pods",
        "jobs",
        "deployments",
        "events_by_reason",
        "counters",
    ]
    pods = summary.as_dict()["pods"]
    assert pods["at_end"] == {"pending": 0, "running": 2, "succeeded": 0, "failed": 0, "deleted": 0}
    assert pods["scheduling_latency_s"]["count"] == 2
    assert summary.deployments[0].ready == 2 and summary.pods.at_end.running == 2
    assert [row["t_s"] for row in result.timeseries] == [0.0, 30.0, 60.0, 90.0, 120.0]


def test_clusterpolicy_updates_need_a_node_agent() -> None:
    with pytest.raises(ValueError, match="need a node agent"):
        not_a_policy: Any = object()  # deliberately the wrong type
        build_simulation([], [], seed=0, policy_updates=((1.0, not_a_policy),))
