"""twin.operator: the GPU Operator's node agent bringing a node from join to Ready, and the
upgrade agent rolling a new driver over the nodes.

Every component takes a fixed time, so the node's timeline is a sum: join 5 s, then the driver
(100 s), toolkit (20 s), validator (10 s), device plugin (7 s: GPUs advertised), DCGM exporter
(3 s) and GFD (2 s: labels, Ready) come up one after the other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuplane.api.pod_phase import PodPhase
from tests.unit.twin.minitwin import MiniTwin, bare_pod, deployment, pool, run_twin, scenario

TIMINGS = {
    "node_join": {"duration": 5},
    "driver": {"duration": 100},
    "toolkit": {"duration": 20},
    "validator": {"duration": 10},
    "device_plugin": {"duration": 7},
    "dcgm_exporter": {"duration": 3},
    "gfd": {"duration": 2},
}
UP_AT = [105.0, 125.0, 135.0, 142.0, 145.0, 147.0]  # driver ... gfd, cumulative


def policy(**upgrade: Any) -> dict[str, Any]:
    driver: dict[str, Any] = {"version": "550.54.15"}
    if upgrade:
        driver["upgradePolicy"] = upgrade
    return {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": "cluster-policy"},
        "spec": {"driver": driver},
    }


def operated(tmp_path: Path, until_s: float) -> MiniTwin:
    return run_twin(
        tmp_path,
        scenario(
            pool(),
            workloads=[bare_pod("gpu-job", 1)],
            cluster_policy=policy(),
            operator=TIMINGS,
        ),
        until_s=until_s,
    )


def test_before_the_device_plugin_is_up_no_gpu_is_advertised(tmp_path: Path) -> None:
    twin = operated(tmp_path, until_s=141.0)
    node = twin.node("gpu-0")
    assert node.gpu_state == "device-plugin-starting"
    assert twin.advertised("gpu-0") == 0
    assert twin.pod("gpu-job").phase is PodPhase.PENDING
    assert node.driver_version == "550.54.15"


def test_the_node_agent_brings_the_node_ready(tmp_path: Path) -> None:
    twin = operated(tmp_path, until_s=300.0)
    node = twin.node("gpu-0")
    assert node.gpu_state == "ready"
    assert twin.advertised("gpu-0") == 8
    assert node.labels["nvidia.com/gpu.count"] == "8"
    assert [e.t_s for e in twin.events("Started", "gpu-0")] == UP_AT
    (joined,) = twin.events("RegisteredNode", "gpu-0")
    assert joined.t_s == 0.0
    # The waiting pod is bound the moment the device plugin advertises the GPUs.
    job = twin.pod("gpu-job")
    assert job.phase is PodPhase.RUNNING and job.scheduled_s == 142.0


def test_the_upgrade_agent_upgrades_one_node_at_a_time(tmp_path: Path) -> None:
    upgrade = {
        "autoUpgrade": True,
        "maxParallelUpgrades": 1,
        "drain": {"enable": True, "force": True},
    }
    serve = deployment("serve", 2, 4)
    twin = run_twin(
        tmp_path,
        scenario(
            pool(count=2),
            workloads=[{"path": "serve.yaml"}],
            cluster_policy=policy(**upgrade),
            cluster_policy_updates=[
                {"at": "600s", "patch": {"spec": {"driver": {"version": "560.35.03"}}}}
            ],
            operator=TIMINGS,
        ),
        until_s=3600.0,
        files={"serve.yaml": serve},
    )
    nodes = [twin.node("gpu-0"), twin.node("gpu-1")]
    assert [n.driver_version for n in nodes] == ["560.35.03", "560.35.03"]
    assert [n.upgrade_state for n in nodes] == ["upgrade-done", "upgrade-done"]
    assert not any(n.unschedulable for n in nodes)
    # Cordons start after the policy change and never overlap (maxParallelUpgrades: 1).
    marks = sorted(
        [(e.t_s, +1, e.name) for e in twin.events("NodeNotSchedulable")]
        + [(e.t_s, -1, e.name) for e in twin.events("NodeSchedulable")]
    )
    assert {name for _, _, name in marks} == {"gpu-0", "gpu-1"}
    assert marks[0][0] >= 600.0
    cordoned = 0
    for _, step, _ in marks:
        cordoned += step
        assert cordoned in (0, 1)
    assert cordoned == 0
