"""Kubelet admission in the twin: TopologyAffinityError, controller churn, aligned allocation."""

from __future__ import annotations

from gpuplane.api.pod_phase import PodPhase
from gpuplane.fit.workload_objects import ContainerSpec, DeploymentSpec, PodTemplate, RestartPolicy
from gpuplane.kubelet.config import CpuManagerPolicy, GpuAllocation, KubeletConfig
from gpuplane.kubelet.topology_manager.policy import PolicyName
from gpuplane.twin.cluster.objects import Pod
from gpuplane.twin.kubelet.simulator import KubeletSim
from gpuplane.twin.scenario.spec import Workload
from tests.factories import make_pool
from tests.twin_factories import RecordedSimulation, build_recorded

GIB = 1024**3
SNN_STATIC = KubeletConfig(
    topology_manager_policy=PolicyName.SINGLE_NUMA_NODE,
    cpu_manager_policy=CpuManagerPolicy.STATIC,
    reserved_cpus=frozenset({0, 112}),
)


def guaranteed(gpus: int, cpus: int = 8, mem_gib: int = 32) -> PodTemplate:
    amounts = {"cpu": cpus * 1000, "memory": mem_gib * GIB, "nvidia.com/gpu": gpus}
    c = ContainerSpec("main", requests=dict(amounts), limits=dict(amounts))
    return PodTemplate(containers=(c,), restart_policy=RestartPolicy.ALWAYS)


def run(
    template: PodTemplate, replicas: int, kubelet: KubeletConfig, until: float = 60.0
) -> RecordedSimulation:
    deploy = DeploymentSpec(name="tp", namespace="ml", template=template, replicas=replicas)
    sim = build_recorded(
        [make_pool(count=1, kubelet=kubelet)],
        [Workload("tp", deploy)],
        seed=1,
        check_invariants=True,
    )
    sim.result = sim.run(until)
    return sim


def pods(sim: RecordedSimulation) -> list[Pod]:
    return sorted(sim.cluster.store.pods.values(), key=lambda p: p.created_s)


def test_single_numa_node_rejects_an_8_gpu_pod_and_the_replicaset_replaces_it_paced() -> None:
    sim = run(guaranteed(8), 1, SNN_STATIC, until=60.0)
    failed = [p for p in pods(sim) if p.phase is PodPhase.FAILED]
    assert failed, "a pod needing 8 GPUs on one NUMA node of a 4+4 node must be refused"
    for p in failed:
        assert p.reason == "TopologyAffinityError"
        assert p.message == "Pod was rejected: Resources cannot be allocated with Topology locality"
    # One bind-then-reject round per admission delay (1 s): about 60 in a minute, never a spin.
    assert 50 <= len(failed) <= 61
    counters = sim.result.summary.counters
    assert counters["admission_rejections"] == len(failed)
    assert counters["controller_replacements"] >= len(failed) - 1
    events = [e for e in sim.result.events if e.reason == "TopologyAffinityError"]
    assert len(events) == len(failed)
    assert events[0].message == "Resources cannot be allocated with Topology locality"
    node = sim.cluster.store.nodes["pool-0"]
    active = [p for p in pods(sim) if p.is_active]
    assert len(active) == 1  # the newest replacement, bound and waiting for admission
    assert {o for o in node.gpu_owner if o is not None} <= {active[0].uid}
    assert node.exclusive_cpus == {}  # rejected pods never got exclusive CPUs


def test_policy_none_admits_the_same_pod() -> None:
    sim = run(guaranteed(8), 1, KubeletConfig(), until=60.0)
    states = [p.phase for p in pods(sim)]
    assert states == [PodPhase.RUNNING]


def test_aligned_allocation_cpus_and_gpus_on_the_pods_numa_node() -> None:
    sim = run(guaranteed(4, cpus=16), 2, SNN_STATIC, until=30.0)
    running = [p for p in pods(sim) if p.phase is PodPhase.RUNNING]
    assert len(running) == 2
    node = sim.cluster.store.nodes["pool-0"]
    topo = node.topology
    numas = set()
    for p in running:
        gpu_numa = {topo.gpus[g].numa for g in p.gpu_ids}
        assert len(gpu_numa) == 1
        cpus = node.exclusive_cpus[p.uid]
        assert len(cpus) == 16
        cpu_numa = {n.id for n in topo.cpu_numa_nodes() if set(cpus) <= set(n.cpus)}
        assert cpu_numa == gpu_numa
        assert not set(cpus) & {0, 112}  # reserved CPUs are never exclusive
        numas |= gpu_numa
    assert len(numas) == 2
    a, b = (set(node.exclusive_cpus[p.uid]) for p in running)
    assert not a & b


def test_the_allocation_at_binding_is_what_the_pod_holds() -> None:
    """One value decided at binding: the GPUs charged are the verdict's, and the kubelet holds
    (then pins) that verdict's CPUs; the same node state gives the same value again."""
    sim = run(guaranteed(2), 1, SNN_STATIC, until=30.0)
    (pod,) = [p for p in pods(sim) if p.phase is PodPhase.RUNNING]
    assert pod.node_name is not None
    node = sim.cluster.store.nodes[pod.node_name]
    alloc = sim.component(KubeletSim).admission.at_bind(node, pod)
    assert alloc.node == node.name and alloc.admission is not None and alloc.admission.admit
    assert alloc.gpu_ids == alloc.admission.gpus == pod.gpu_ids
    assert alloc.cpu_hold == node.exclusive_cpus[pod.uid]
    assert sim.component(KubeletSim).admission.at_bind(node, pod) == alloc


def test_device_plugin_preference_decides_gpus_at_binding() -> None:
    """A 1-GPU pod takes GPU0 first; the 2-GPU pod after it then differs by policy: the lowest
    free ids (GPU1, GPU2) are only PCIe-connected on seed-8gpu, NVIDIA's best-effort and
    gpuplane's choice keep it on an NVLink pair."""

    def gpus_of(policy: GpuAllocation) -> tuple[int, ...]:
        one = DeploymentSpec(name="one", namespace="ml", template=guaranteed(1), replicas=1)
        two = DeploymentSpec(name="two", namespace="ml", template=guaranteed(2), replicas=1)
        sim = build_recorded(
            [make_pool(count=1, kubelet=KubeletConfig(gpu_allocation=policy))],
            [Workload("one", one), Workload("two", two)],
            seed=1,
            check_invariants=True,
        )
        sim.run(5.0)
        by_name = {p.name.split("-")[0]: p for p in sim.cluster.store.pods.values()}
        assert by_name["one"].gpu_ids == (0,)
        return by_name["two"].gpu_ids

    topo = make_pool(count=1).topology
    assert gpus_of(GpuAllocation.FIRST) == (1, 2)
    assert not topo.gpu_link(1, 2).is_nvlink
    for policy in (GpuAllocation.BEST_EFFORT, GpuAllocation.GPUPLANE):
        a, b = gpus_of(policy)
        assert topo.gpu_link(a, b).is_nvlink, policy


def test_topology_aware_path_has_no_admission_failures_and_no_island_misses() -> None:
    """The benchmark's two configurations, short: gpuplane's path (NodeResourceTopologyMatch +
    GPUTopology + widest-ring device choice) is never refused by a kubelet and never puts a TP
    group off an NVLink island while one was free; both runs keep every invariant."""
    from bench.topology_alignment import run as bench_run

    gp, _ = bench_run("gpuplane", 0.75, seed=3)
    assert gp["admission failures"] == 0
    assert gp["pods recreated by controllers"] == 0
    assert gp["off an island while one was free"] == 0
    assert gp["multi-GPU pods that ran"] > 5
    default, _ = bench_run("default", 0.75, seed=3)
    assert default["mean ring bottleneck GB/s"] <= gp["mean ring bottleneck GB/s"]
