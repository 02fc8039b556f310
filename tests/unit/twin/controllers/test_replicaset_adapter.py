"""twin.controllers: the ReplicaSet controller keeps its replica count when a pod fails.

GPU 0 of the only node falls off the bus (Xid 79) at 50 s; the pod using it fails, and the
ReplicaSet creates a replacement at once, which the scheduler puts on a healthy GPU.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuplane.api.pod_phase import PodPhase
from tests.unit.twin.minitwin import MiniTwin, pod_spec, pool, run_twin, scenario


def replica_set(replicas: int, gpus: int) -> dict[str, Any]:
    template = pod_spec(gpus)
    template["metadata"]["labels"] = {"app": "work"}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "work", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "work"}},
            "template": template,
        },
    }


def xid_twin(tmp_path: Path, until_s: float) -> MiniTwin:
    xid = {"kind": "gpu-xid", "at": "50s", "gpu": 0, "xid": 79, "nodes": {"names": ["gpu-0"]}}
    return run_twin(
        tmp_path,
        scenario(
            pool(), workloads=[{"path": "rs.yaml", "duration": {"until_end": True}}], faults=[xid]
        ),
        until_s=until_s,
        files={"rs.yaml": replica_set(2, 1)},
    )


def test_the_replicaset_recreates_a_failed_pod(tmp_path: Path) -> None:
    twin = xid_twin(tmp_path, until_s=120.0)
    pods = twin.pods("work")
    assert len(pods) == 3
    (lost,) = [p for p in pods if p.gpu_ids == (0,)]
    assert lost.phase is PodPhase.FAILED and lost.finished_s == 50.0
    (new,) = [p for p in pods if p.created_s > 0]
    assert new.created_s == 50.0 and new.phase is PodPhase.RUNNING
    # The replacement avoids the dead GPU and the GPU the surviving replica holds.
    held = {g for p in pods if p.is_active for g in p.gpu_ids}
    assert len(held) == 2 and 0 not in held
    assert len([p for p in pods if p.is_active]) == 2
    rs = twin.store.replica_sets["default/work"]
    assert rs.replacements == 1
    creates = [e.t_s for e in twin.events("SuccessfulCreate", "work")]
    assert creates == [0.0, 0.0, 50.0]
    assert twin.node("gpu-0").gpu_healthy == [False] + [True] * 7


def test_nothing_is_replaced_before_the_fault(tmp_path: Path) -> None:
    twin = xid_twin(tmp_path, until_s=49.0)
    pods = twin.pods("work")
    assert len(pods) == 2 and all(p.phase is PodPhase.RUNNING for p in pods)
    assert twin.store.replica_sets["default/work"].replacements == 0
