"""twin.autoscaling: KEDA's scale loop and the HPA it creates write the target's replicas.

The trigger's query is a constant, ``vector(12)``, against a threshold of 2 (an AverageValue
target, KEDA's default): the HPA wants ceil(12 / 2) = 6 replicas. The ScaledObject sets no
``behavior``, so the HPA limits each sync (every 15 s) to max(2 x current, 4) replicas: from 1
replica it goes to 4, then to 6.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.unit.twin.minitwin import MiniTwin, deployment, pool, run_twin, scenario


def scaled_object(query: str, *, max_replicas: int = 10) -> dict[str, Any]:
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "scaleTargetRef": {"name": "web"},
            "minReplicaCount": 1,
            "maxReplicaCount": max_replicas,
            "pollingInterval": 5,
            "triggers": [
                {
                    "type": "prometheus",
                    "metadata": {
                        "serverAddress": "http://prometheus:9090",
                        "query": query,
                        "threshold": "2",
                    },
                }
            ],
        },
    }


def keda_twin(tmp_path: Path, query: str, **so: Any) -> MiniTwin:
    return run_twin(
        tmp_path,
        scenario(pool(), workloads=[{"path": "web.yaml"}], autoscaling=["keda.yaml"]),
        until_s=300.0,
        files={"web.yaml": deployment("web", 1), "keda.yaml": scaled_object(query, **so)},
    )


def replica_steps(twin: MiniTwin) -> list[tuple[float, int]]:
    """(time, replicas) of each rescale the HPA made, from the Deployment's events (the first
    event, creating the ReplicaSet at 1 replica, is the Deployment's own)."""
    out = []
    for e in twin.events("ScalingReplicaSet", "web"):
        if "external metric" in e.message:
            out.append((e.t_s, int(e.message.split(" to ")[1].split()[0])))
    return out


def test_the_scale_loop_writes_the_replicas_the_metric_asks_for(tmp_path: Path) -> None:
    twin = keda_twin(tmp_path, "vector(12)")
    steps = replica_steps(twin)
    assert steps == [(15.0, 4), (30.0, 6)]
    assert twin.store.deployments["default/web"].replicas == 6
    running = [p for p in twin.pods("web") if p.is_active and p.node_name is not None]
    assert len(running) == 6


def test_max_replica_count_caps_the_scale_up(tmp_path: Path) -> None:
    twin = keda_twin(tmp_path, "vector(12)", max_replicas=3)
    assert [r for _, r in replica_steps(twin)] == [3]
    assert twin.store.deployments["default/web"].replicas == 3


def test_a_metric_under_the_threshold_leaves_the_replicas_alone(tmp_path: Path) -> None:
    twin = keda_twin(tmp_path, "vector(1)")  # ceil(1 / 2) = 1: already there
    assert replica_steps(twin) == []
    assert twin.store.deployments["default/web"].replicas == 1
