"""Time-slicing and MPS in the twin: replicas, spreading, refused requests, OOM blast radius."""

from __future__ import annotations

from dataclasses import replace

from gpuplane.api.pod_phase import PodPhase
from gpuplane.fit.workload_objects import DeploymentSpec, PodTemplate
from gpuplane.slicing.sharing.config import DevicePluginConfig, device_plugin_config_from_dict
from gpuplane.twin.scenario.spec import ArriveAt, Workload
from tests.factories import make_pool, make_template
from tests.twin_factories import RecordedSimulation, build_recorded

GIB = 1024**3


def sharing(strategy: str, replicas: int, **extra: object) -> DevicePluginConfig:
    key = "mps" if strategy == "mps" else "timeSlicing"
    return device_plugin_config_from_dict(
        {
            "sharing": {
                key: {"resources": [{"name": "nvidia.com/gpu", "replicas": replicas}], **extra}
            }
        }
    )


def template(gpus: int = 1, mem_gib: int = 0) -> PodTemplate:
    t = make_template(gpus=gpus, restart="Always")
    return replace(t, gpu_memory_bytes=mem_gib * GIB)


def run(
    cfg: DevicePluginConfig, deployments: list[tuple[str, PodTemplate, int, float]], until: float
) -> RecordedSimulation:
    pool = make_pool("seed-8gpu", count=1, device_plugin=cfg)
    workloads = [
        Workload(
            name, DeploymentSpec(name=name, namespace="ml", template=t, replicas=n), ArriveAt(at)
        )
        for name, t, n, at in deployments
    ]
    sim = build_recorded([pool], workloads, seed=1, check_invariants=True)
    sim.result = sim.run(until)
    return sim


def test_time_slicing_advertises_replicas_and_spreads_them() -> None:
    sim = run(sharing("ts", 4), [("w", template(), 12, 0.0)], 10.0)
    node = sim.cluster.store.nodes["pool-0"]
    assert node.num_devices == 32
    assert node.capacity["nvidia.com/gpu"] == 32
    running = [p for p in sim.cluster.store.pods.values() if p.phase is PodPhase.RUNNING]
    assert len(running) == 12
    per_gpu = [0] * 8
    for p in running:
        per_gpu[node.device_slots[p.gpu_ids[0]].gpu] += 1
    assert sorted(per_gpu) == [1, 1, 1, 1, 2, 2, 2, 2]  # distributed, not packed onto GPU 0


def test_renamed_resource_is_a_separate_extended_resource() -> None:
    cfg = sharing("ts", 2, renameByDefault=True)
    t = template(gpus=0)
    main = replace(
        t.containers[0], requests={**t.containers[0].requests, "nvidia.com/gpu.shared": 1}
    )
    t = replace(t, containers=(main,))
    sim = run(cfg, [("w", t, 5, 0.0)], 10.0)
    node = sim.cluster.store.nodes["pool-0"]
    assert node.num_devices == 0
    assert node.allocatable["nvidia.com/gpu.shared"] == 16
    pods = [p for p in sim.cluster.store.pods.values() if p.phase is PodPhase.RUNNING]
    assert len(pods) == 5
    assert all(len(p.ext_device_ids["nvidia.com/gpu.shared"]) == 1 for p in pods)


def test_fail_requests_greater_than_one_rejects_at_admission() -> None:
    cfg = sharing("ts", 4, failRequestsGreaterThanOne=True)
    sim = run(cfg, [("two", template(gpus=2), 1, 0.0)], 5.5)
    failed = [p for p in sim.cluster.store.pods.values() if p.phase is PodPhase.FAILED]
    assert failed
    assert failed[0].reason == "UnexpectedAdmissionError"
    assert "maximum request size for shared resources is 1" in (failed[0].message or "")


def test_time_slicing_oom_takes_down_every_pod_on_the_gpu() -> None:
    # 8 pods at 30 GiB spread one per GPU, then 8 more: 60 GiB per 80 GiB GPU is fine; a third
    # wave pushes every GPU to 90 GiB and all three pods on each GPU crash together.
    waves = [(f"w{i}", template(mem_gib=30), 8, 10.0 * i) for i in range(3)]
    sim = run(sharing("ts", 4), waves, 25.0)
    counters = sim.result.summary.counters
    assert counters["gpu_oom_kills"] == 24
    restarted = [p for p in sim.cluster.store.pods.values() if p.restart_count > 0]
    assert len(restarted) == 24


def test_mps_limits_the_damage_to_the_offending_client() -> None:
    # MPS with 4 replicas: 20 GiB per client. 15 GiB pods run; a 30 GiB pod fails alone.
    waves = [("small", template(mem_gib=15), 16, 0.0), ("big", template(mem_gib=30), 1, 10.0)]
    sim = run(sharing("mps", 4), waves, 15.0)
    counters = sim.result.summary.counters
    assert counters["gpu_oom_kills"] == 1
    big = [p for p in sim.cluster.store.pods.values() if p.name.startswith("big")]
    assert big[0].restart_count == 1
    small = [p for p in sim.cluster.store.pods.values() if p.name.startswith("small")]
    assert all(p.restart_count == 0 and p.phase is PodPhase.RUNNING for p in small)


def test_gpu_hours_count_a_replica_as_a_fraction_of_a_gpu() -> None:
    sim = run(sharing("ts", 4), [("w", template(), 4, 0.0)], 3600.0)
    hours = sim.result.summary.pods.gpu_hours_allocated
    assert abs(hours - 1.0) < 0.01  # 4 replicas x 1/4 GPU x 1 h
