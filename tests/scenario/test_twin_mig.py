"""MIG in the twin: instances advertised per strategy, pods on instances, demand-driven
repartitioning by the exact planner, OOM inside an instance."""

from __future__ import annotations

from dataclasses import replace

from gpuplane.api.pod_phase import PodPhase
from gpuplane.fit.workload_objects import ContainerSpec, DeploymentSpec, PodTemplate, RestartPolicy
from gpuplane.slicing.mig.node_devices import layouts_from_config
from gpuplane.twin.cluster.objects import Pod
from gpuplane.twin.scenario.mig import MigPoolSpec
from gpuplane.twin.scenario.spec import ArriveAt, NodePoolSpec, Workload
from tests.factories import make_pool
from tests.twin_factories import RecordedSimulation, build_recorded

GIB = 1024**3


def mig_pool(
    config: str,
    *,
    strategy: str = "mixed",
    dynamic: bool = False,
    count: int = 1,
    allow_evict: bool = False,
) -> NodePoolSpec:
    pool = make_pool("dgx-h100", count=count)
    layouts = layouts_from_config(pool.topology, config)
    spec = MigPoolSpec(
        strategy=strategy,
        config=config,
        dynamic=dynamic,
        allow_evict=allow_evict,
        layouts=layouts,
    )
    return replace(pool, mig=spec)


def mig_template(profile: str, n: int = 1, mem_gib: int = 0) -> PodTemplate:
    res = {"cpu": 1000, "memory": 4 * GIB, f"nvidia.com/mig-{profile}": n}
    c = ContainerSpec("main", requests=dict(res), limits=dict(res))
    return PodTemplate(
        containers=(c,), restart_policy=RestartPolicy.ALWAYS, gpu_memory_bytes=mem_gib * GIB
    )


def run(
    pool: NodePoolSpec, deps: list[tuple[str, PodTemplate, int, float]], until: float
) -> RecordedSimulation:
    workloads = [
        Workload(n, DeploymentSpec(name=n, namespace="ml", template=t, replicas=r), ArriveAt(at))
        for n, t, r, at in deps
    ]
    sim = build_recorded([pool], workloads, seed=2, check_invariants=True)
    sim.result = sim.run(until)
    return sim


def running(sim: RecordedSimulation, prefix: str = "") -> list[Pod]:
    return [
        p
        for p in sim.cluster.store.pods.values()
        if p.phase is PodPhase.RUNNING and not p.is_deleted and p.name.startswith(prefix)
    ]


def test_mixed_strategy_advertises_one_resource_per_profile() -> None:
    sim = run(mig_pool("all-1g.10gb"), [("w", mig_template("1g.10gb"), 20, 0.0)], 10.0)
    node = sim.cluster.store.nodes["pool-0"]
    assert node.allocatable["nvidia.com/mig-1g.10gb"] == 56  # 7 per GPU x 8
    assert node.allocatable.get("nvidia.com/mig-3g.40gb", 0) == 0
    assert node.num_devices == 0  # no whole GPUs under MIG mixed
    assert node.labels["nvidia.com/mig.strategy"] == "mixed"
    assert node.labels["nvidia.com/mig.config"] == "all-1g.10gb"
    assert len(running(sim)) == 20


def test_single_strategy_advertises_instances_as_gpus() -> None:
    pool = mig_pool("all-3g.40gb", strategy="single")
    t = PodTemplate(
        containers=(ContainerSpec("main", requests={"nvidia.com/gpu": 1, "cpu": 1000}),),
        restart_policy=RestartPolicy.ALWAYS,
    )
    sim = run(pool, [("w", t, 10, 0.0)], 10.0)
    node = sim.cluster.store.nodes["pool-0"]
    assert node.num_devices == 16
    assert len(running(sim)) == 10
    assert all(node.device_slots[p.gpu_ids[0]].profile == "3g.40gb" for p in running(sim))


def test_static_layout_leaves_other_profiles_pending() -> None:
    sim = run(mig_pool("all-1g.10gb"), [("big", mig_template("3g.40gb"), 2, 0.0)], 120.0)
    assert running(sim) == []


DYNAMIC_DEPS = [
    ("small", mig_template("1g.10gb"), 10, 0.0),
    ("big", mig_template("3g.40gb"), 4, 5.0),
]


def test_the_controller_leaves_a_busy_node_alone_without_allow_evict() -> None:
    # The live controller's rule: relabelling a node makes the MIG manager drain its MIG pods,
    # so a node with running GPU pods is skipped (would-evict) unless --allow-evict.
    sim = run(mig_pool("all-1g.10gb", dynamic=True), DYNAMIC_DEPS, 200.0)
    assert len(running(sim, "small")) == 10
    assert running(sim, "big") == []
    assert sim.result.summary.counters.get("mig_reconfigurations", 0) == 0
    node = sim.cluster.store.nodes["pool-0"]
    assert node.labels["nvidia.com/mig.config"] == "all-1g.10gb"
    events = [e for e in sim.result.events if e.reason == "GpuplaneMigRepartition"]
    assert events == []


def test_with_allow_evict_the_controller_relabels_and_the_manager_applies() -> None:
    pool = mig_pool("all-1g.10gb", dynamic=True, allow_evict=True)
    sim = run(pool, DYNAMIC_DEPS, 200.0)
    assert len(running(sim, "small")) == 10  # evicted, recreated, back on 1g.10gb instances
    assert len(running(sim, "big")) == 4  # 4 x 3g.40gb = two GPUs repartitioned
    counters = sim.result.summary.counters
    assert counters["mig_reconfigurations"] == 1
    node = sim.cluster.store.nodes["pool-0"]
    assert node.labels["nvidia.com/mig.config.state"] == "success"
    (relabel,) = [e for e in sim.result.events if e.reason == "GpuplaneMigRepartition"]
    assert relabel.t_s == 30.0 and node.labels["nvidia.com/mig.config"] in relabel.message
    (applied,) = [e for e in sim.result.events if e.reason == "MigConfigApplied"]
    assert applied.t_s == 90.0  # the pool's reconfigure_s after the relabel
    evicted = [e for e in sim.result.events if e.reason == "Evicted"]
    assert len(evicted) == 10  # every GPU pod on the node, as the decision says
    layouts = node.mig_layouts or []
    three = sum(1 for layout in layouts for i in layout.instances if i.profile == "3g.40gb")
    assert three == 4  # exactly what was asked
    # Fewest GPUs changed: two GPUs rebuilt, the six others keep NVIDIA's all-1g.10gb.
    assert sum(1 for layout in layouts if layout.counts() == {"1g.10gb": 7}) == 6


def test_oom_inside_a_mig_instance_hits_only_that_pod() -> None:
    deps = [
        ("fit", mig_template("1g.10gb", mem_gib=8), 3, 0.0),
        ("over", mig_template("1g.10gb", mem_gib=12), 1, 0.0),
    ]
    sim = run(mig_pool("all-1g.10gb"), deps, 5.0)
    counters = sim.result.summary.counters
    assert counters["gpu_oom_kills"] == 1
    assert all(p.restart_count == 0 for p in running(sim, "fit"))


def test_mig_manager_applies_a_relabel_by_draining_and_reconfiguring() -> None:
    from gpuplane.twin.scenario.mig import MigConfigChange

    pool = mig_pool("all-1g.10gb")
    workloads = [
        Workload(
            "small",
            DeploymentSpec(
                name="small", namespace="ml", template=mig_template("1g.10gb"), replicas=4
            ),
            ArriveAt(0.0),
        ),
        Workload(
            "big",
            DeploymentSpec(
                name="big", namespace="ml", template=mig_template("3g.40gb"), replicas=4
            ),
            ArriveAt(0.0),
        ),
    ]
    change = MigConfigChange(100.0, "pool", "all-3g.40gb", reconfigure_s=60.0)
    sim = build_recorded(
        [pool],
        workloads,
        seed=2,
        check_invariants=True,
        mig_config_changes=(change,),
    )
    sim.result = sim.run(130.0)
    node = sim.cluster.store.nodes["pool-0"]
    assert node.labels["nvidia.com/mig.config.state"] == "pending"
    assert node.unschedulable
    assert node.allocatable["nvidia.com/mig-1g.10gb"] == 0
    evicted = [e for e in sim.result.events if e.reason == "Evicted"]
    assert len(evicted) == 4  # the four small pods held 1g.10gb instances
    sim2 = build_recorded(
        [pool],
        workloads,
        seed=2,
        check_invariants=True,
        mig_config_changes=(change,),
    )
    sim2.run(300.0)
    node = sim2.cluster.store.nodes["pool-0"]
    assert node.labels["nvidia.com/mig.config"] == "all-3g.40gb"
    assert node.labels["nvidia.com/mig.config.state"] == "success"
    assert not node.unschedulable
    assert node.allocatable["nvidia.com/mig-3g.40gb"] == 16
    assert len(running(sim2, "big")) == 4
    assert running(sim2, "small") == []  # no 1g.10gb instances any more
