"""twin.scheduling with PodTopologySpread and InterPodAffinity: a Deployment's replicas spread
over identical nodes by the system default constraints, a manifest's own constraints and pod
anti-affinity hold, and the snapshot's pod index stays in step with the bound pods."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from gpuplane.api.pod_phase import PodPhase
from gpuplane.scheduler.framework.pod_index import PodLabelIndex
from gpuplane.twin.scheduling.loop import SchedulerLoop
from tests.unit.twin.minitwin import MiniTwin, deployment, pool, run_twin, scenario

# Requests too small for LeastAllocated to tell the nodes apart.
TINY: dict[str, Any] = {"cpu": "10m", "memory": "16Mi"}
NO_SPREAD = {
    "scheduler_profiles": [
        {"plugins": {"multiPoint": {"disabled": [{"name": "PodTopologySpread"}]}}}
    ]
}


def entry(manifest: dict[str, Any]) -> dict[str, Any]:
    return {"manifest": manifest, "arrival": {"at": "0s"}, "duration": {"until_end": True}}


def nodes_of(twin: MiniTwin, prefix: str) -> Counter[str | None]:
    return Counter(p.node_name for p in twin.pods(prefix) if not p.is_deleted)


def test_a_deployment_spreads_one_replica_per_identical_node(tmp_path: Path) -> None:
    web = entry(deployment("web", 4, **TINY))
    twin = run_twin(tmp_path, scenario(pool(count=4), workloads=[web]), until_s=30.0)
    assert nodes_of(twin, "web") == {f"gpu-{i}": 1 for i in range(4)}
    # Without PodTopologySpread the same pods tie on every node and stack by uid hash.
    (tmp_path / "plain").mkdir()
    plain = run_twin(
        tmp_path / "plain",
        scenario(pool(count=4), workloads=[web], control_plane=NO_SPREAD),
        until_s=30.0,
    )
    assert max(nodes_of(plain, "web").values()) > 1


def test_the_manifests_own_constraint_bounds_the_skew(tmp_path: Path) -> None:
    manifest = deployment("db", 3, **TINY)
    manifest["spec"]["template"]["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "db"}},
        }
    ]
    twin = run_twin(tmp_path, scenario(pool(count=2), workloads=[entry(manifest)]), until_s=30.0)
    assert sorted(nodes_of(twin, "db").values()) == [1, 2]


def test_required_anti_affinity_leaves_the_extra_replica_pending(tmp_path: Path) -> None:
    manifest = deployment("cache", 3, **TINY)
    term = {
        "labelSelector": {"matchLabels": {"app": "cache"}},
        "topologyKey": "kubernetes.io/hostname",
    }
    manifest["spec"]["template"]["spec"]["affinity"] = {
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    }
    twin = run_twin(tmp_path, scenario(pool(count=2), workloads=[entry(manifest)]), until_s=30.0)
    placed = nodes_of(twin, "cache")
    assert placed == {"gpu-0": 1, "gpu-1": 1, None: 1}
    (pending,) = [p for p in twin.pods("cache") if p.phase is PodPhase.PENDING]
    assert pending.last_schedule_message == (
        "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. preemption: "
        "0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )
    index = twin.sim.component(SchedulerLoop).snapshots
    rebuilt = PodLabelIndex.of_bound(index.bound.values())
    assert sorted(
        (g.namespace, dict(g.labels), g.nodes) for g in index.pod_index.all_groups()
    ) == sorted((g.namespace, dict(g.labels), g.nodes) for g in rebuilt.all_groups())
