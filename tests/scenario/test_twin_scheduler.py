"""The scheduling framework inside twin runs: preemption with controllers replacing the victims,
gangs waiting at Permit and timing out (never partly bound), fractional GPUs, scenario profiles.
Invariants are checked after every event."""

from __future__ import annotations

from pathlib import Path

from gpuplane.api.pod_phase import PodPhase
from gpuplane.fit.workload_objects import (
    ContainerSpec,
    DeploymentSpec,
    JobSpec,
    PodGroupSpec,
    PodTemplate,
    RestartPolicy,
)
from gpuplane.k8s.scenario.loader import load_scenario_spec
from gpuplane.scheduler.framework.config import gpuplane_profile
from gpuplane.twin.build import build_simulation, simulation_from_spec
from gpuplane.twin.scenario.settings import TwinSettings
from gpuplane.twin.scenario.spec import ArriveAt, FixedDuration, Workload
from gpuplane.twin.simulation import Simulation
from tests.factories import make_pool, make_template

GANG = {"scheduling.x-k8s.io/pod-group": "g"}
# Gangs need Coscheduling: gpuplane's profile, not kube's default.
GANGS = TwinSettings(scheduler_profiles=(gpuplane_profile("default-scheduler"),))


def events(sim: Simulation, reason: str) -> list[str]:
    return [e.message for e in sim.cluster.events.events if e.reason == reason]


def test_preemption_evicts_minimal_victims_and_controllers_replace_them() -> None:
    batch = DeploymentSpec(
        name="batch", namespace="d", template=make_template(gpus=2, restart="Always"), replicas=4
    )
    vip = JobSpec(name="vip", namespace="d", template=make_template(gpus=4, priority=1000))
    sim = build_simulation(
        [make_pool(count=1)],
        [Workload("batch", batch), Workload("vip", vip, ArriveAt(100.0), FixedDuration(600))],
        seed=1,
        check_invariants=True,
    )
    result = sim.run(300.0)
    store = sim.cluster.store
    preemptor = next(p for p in store.pods.values() if p.owner and p.owner.name == "vip")
    victims = [p for p in store.pods.values() if p.reason == "Preempted" or p.is_deleted]
    assert len(victims) == 2  # 4 GPUs needed, 2 GPUs per victim: no more
    assert events(sim, "Preempted") == [f"Preempted by pod {preemptor.uid} on node pool-0"] * 2
    assert preemptor.node_name == "pool-0" and preemptor.nominated_node_name is None
    assert preemptor.scheduled_s == 101.0  # its 1 s back-off after the failed attempt
    replacements = [p for p in store.pods.values() if p.owner and p.owner.name.startswith("batch")]
    assert len(replacements) == 6
    pending = [p for p in replacements if p.phase is PodPhase.PENDING and not p.is_deleted]
    assert len(pending) == 2
    assert result.summary.deployments[0].replacements == 2
    assert pending[0].last_schedule_message is not None
    assert "Insufficient nvidia.com/gpu" in pending[0].last_schedule_message


def test_gang_waits_at_permit_then_times_out_without_a_partial_start() -> None:
    # 10 one-GPU members, room for 9 while the blocker runs: missing 10% of the gang, the 9
    # wait at Permit holding their GPUs, and their wait ends after scheduleTimeoutSeconds.
    group = PodGroupSpec(name="g", namespace="ml", min_member=10, schedule_timeout_s=60.0)
    gang = JobSpec(
        name="gang",
        namespace="ml",
        template=make_template(gpus=1, labels=GANG),
        completions=10,
        parallelism=10,
    )
    blocker = JobSpec(name="blocker", namespace="ml", template=make_template(gpus=7))
    sim = build_simulation(
        [make_pool(count=2)],
        [
            Workload("pg", group),
            Workload("blocker", blocker, ArriveAt(0.0), FixedDuration(1000)),
            Workload("gang", gang, ArriveAt(1.0), FixedDuration(600)),
        ],
        seed=3,
        settings=GANGS,
        check_invariants=True,
    )
    sim.run(2000.0)
    failed = events(sim, "FailedScheduling")
    assert (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 1m0s at plugin "
        "Coscheduling." in failed
    )
    assert "0/1 nodes are available: 1 rejection in Unreserve." in failed
    # Never a partial gang: all ten bound at one instant, once the blocker's GPUs were free.
    members = [p for p in sim.cluster.store.pods.values() if p.pod_group == "g"]
    assert len(members) == 10
    times = {p.scheduled_s for p in members}
    assert len(times) == 1
    (t,) = times
    assert t is not None and t >= 1000.0


def share_template(milli: int) -> PodTemplate:
    req = {"cpu": 500, "memory": 2**30, "gpuplane.io/gpu-milli": milli}
    return PodTemplate(
        containers=(ContainerSpec("main", requests=req, limits={"gpuplane.io/gpu-milli": milli}),),
        restart_policy=RestartPolicy.ALWAYS,
    )


def test_fractional_pods_share_gpus() -> None:
    shared = DeploymentSpec(name="small", namespace="s", template=share_template(500), replicas=17)
    whole = JobSpec(name="whole", namespace="s", template=make_template(gpus=1))
    sim = build_simulation(
        [make_pool(count=1)],
        [Workload("small", shared), Workload("whole", whole, ArriveAt(10.0), FixedDuration(60))],
        seed=2,
        check_invariants=True,
    )
    sim.run(100.0)
    store = sim.cluster.store
    assert store.gpu_shares["pool-0"] == [1000] * 8
    running = [p for p in store.pods.values() if p.node_name is not None]
    assert len(running) == 16 and all(p.gpu_ids == () for p in running)
    pending = [p for p in store.pods.values() if p.node_name is None]
    assert {(p.last_schedule_message or "").split(" preemption:")[0] for p in pending} == {
        "0/1 nodes are available: 1 Insufficient gpuplane.io/gpu-milli.",
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.",
    }


SCENARIO = """
name: profiles
node_pools:
  - {name: a, preset: seed-8gpu, count: 2}
control_plane:
  scheduler_profiles:
    - schedulerName: default-scheduler
    - schedulerName: packer
      # kube's default spreading of a Deployment's replicas (weight 2) outweighs
      # MostAllocated: a packing profile turns it off.
      plugins: {multiPoint: {disabled: [{name: PodTopologySpread}]}}
      pluginConfig:
        - name: NodeResourcesFit
          args: {scoringStrategy: {type: MostAllocated}}
workloads:
  - manifest:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: spread, namespace: x}
      spec:
        replicas: 2
        selector: {matchLabels: {app: spread}}
        template:
          metadata: {labels: {app: spread}}
          spec:
            containers:
              - name: c
                resources: {limits: {nvidia.com/gpu: 1, cpu: "16", memory: 64Gi}}
  - arrival: {at: 10s}
    manifest:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: packed, namespace: x}
      spec:
        replicas: 2
        selector: {matchLabels: {app: packed}}
        template:
          metadata: {labels: {app: packed}}
          spec:
            schedulerName: packer
            containers:
              - name: c
                resources: {limits: {nvidia.com/gpu: 1, cpu: "16", memory: 64Gi}}
"""


def test_the_scenario_chooses_the_profiles(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    spec = load_scenario_spec(path).spec
    assert [p.schedulerName for p in spec.control_plane.scheduler_profiles] == [
        "default-scheduler",
        "packer",
    ]
    sim = simulation_from_spec(spec, seed=1, check_invariants=True)
    sim.run(600.0)
    nodes: dict[str, set[str]] = {}
    for p in sim.cluster.store.pods.values():
        nodes.setdefault(p.name.split("-")[0], set()).add(str(p.node_name))
    assert len(nodes["spread"]) == 2  # the default profile spreads (LeastAllocated, spreading)
    assert len(nodes["packed"]) == 1  # the packer profile's MostAllocated packs


def test_a_bad_profile_is_located_in_the_scenario(tmp_path: Path) -> None:
    import pytest

    from gpuplane.core.errors import InputError

    path = tmp_path / "s.yaml"
    path.write_text(
        "name: x\nnode_pools:\n  - {name: a, preset: seed-8gpu, count: 1}\ncontrol_plane:\n"
        "  scheduler_profiles:\n    - plugins:\n        score:\n          enabled:\n"
        "            - {name: NodeResourcesFitt}\n"
    )
    with pytest.raises(InputError) as info:
        load_scenario_spec(path)
    assert (
        f"{path}:9: control_plane.scheduler_profiles[0].plugins.score.enabled[0].name: "
        "unknown plugin 'NodeResourcesFitt'; valid names: Coscheduling"
    ) in str(info.value)
