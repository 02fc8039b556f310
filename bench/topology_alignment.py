"""Benchmark: topology-blind scheduling + kubelet admission vs gpuplane's topology-aware path.

Run: ``make bench-topology`` (or ``.venv/bin/python bench/topology_alignment.py [--hours H]
[--seeds N]``). One twin of mixed nodes, every kubelet with ``topologyManagerPolicy:
single-numa-node`` and ``cpuManagerPolicy: static``:
- 4 x seed-8gpu (2 sockets, NVLink islands GPU0-3 / GPU4-7, one per socket),
- 2 x DGX H100 (NVSwitch: one island of 8, 4 GPUs per socket),
- 2 x L40S PCIe (no NVLink at all).
Workloads (all pods Guaranteed: integer CPUs, memory limits = requests): inference Deployments
with TP = 1, 2, 4 and 8 (TP8 cannot be admitted anywhere under single-numa-node: no socket has
8 GPUs), plus seeded Poisson streams of 1/2/4-GPU batch Jobs and CPU-only Jobs.

Two configurations run side by side in this process on the same seed:
(a) ``default``: kube-scheduler's default plugins (GPUs counted, topology unknown) and NVIDIA's
    device plugin choosing GPUs with go-gpuallocator's best-effort policy;
(b) ``gpuplane``: the same plus NodeResourceTopologyMatch (filter + LeastAllocated score) and
    GPUTopology (score), and the device plugin choosing with gpuplane's widest-ring policy.
Printed per configuration: kubelet admission failures (TopologyAffinityError), pods recreated by
controllers, multi-GPU pods that ran and the share of them inside one NVLink island (L40S pods
can never be), their mean ring bottleneck (GB/s, weighted by run time), pods still pending at the
end, and the wall time. The ratio column is gpuplane / default.
"""

from __future__ import annotations

import argparse
import math
import time

from gpuplane.api.pod_phase import PodPhase
from gpuplane.fit.workload_objects import (
    ContainerSpec,
    DeploymentSpec,
    JobSpec,
    PodTemplate,
    RestartPolicy,
)
from gpuplane.kubelet.admission import node_state
from gpuplane.kubelet.config import CpuManagerPolicy, GpuAllocation, KubeletConfig
from gpuplane.kubelet.cpu_manager import allocate_cpus
from gpuplane.kubelet.topology_manager.policy import PolicyName
from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.topology.collective import best_ring
from gpuplane.topology.model import NodeTopology
from gpuplane.topology.presets import load_preset
from gpuplane.twin.build import build_simulation
from gpuplane.twin.cluster.objects import Pod
from gpuplane.twin.scenario.settings import TwinSettings
from gpuplane.twin.scenario.spec import (
    ArriveAt,
    ArrivePoisson,
    ExponentialDuration,
    NodePoolSpec,
    Workload,
)
from gpuplane.twin.simulation import Simulation

GIB = 1024**3
POOLS = (("seed", "seed-8gpu", 4), ("dgx", "dgx-h100", 2), ("l40s", "l40s-8gpu-pcie", 2))
GPUPLANE_PROFILE = {
    "plugins": {
        "filter": {"enabled": [{"name": "NodeResourceTopologyMatch"}]},
        "score": {
            "enabled": [
                {"name": "NodeResourceTopologyMatch", "weight": 2},
                {"name": "GPUTopology", "weight": 5},
            ]
        },
    }
}


def guaranteed(gpus: int, cpus: int, mem_gib: int, restart: RestartPolicy) -> PodTemplate:
    amounts = {"cpu": cpus * 1000, "memory": mem_gib * GIB}
    if gpus:
        amounts["nvidia.com/gpu"] = gpus
    c = ContainerSpec("main", requests=dict(amounts), limits=dict(amounts))
    return PodTemplate(containers=(c,), restart_policy=restart)


def workloads(hours: float) -> list[Workload]:
    always, never = RestartPolicy.ALWAYS, RestartPolicy.NEVER
    out: list[Workload] = []
    for tp, replicas, at in ((1, 6, 0.0), (2, 5, 60.0), (4, 4, 120.0), (8, 1, 180.0)):
        spec = DeploymentSpec(
            name=f"llm-tp{tp}",
            namespace="serving",
            template=guaranteed(tp, 8 * tp, 64 * tp, always),
            replicas=replicas,
        )
        out.append(Workload(f"llm-tp{tp}", spec, ArriveAt(at)))
    horizon = hours * 3600
    for gpus, rate_h, mean_min in ((1, 30, 20), (2, 12, 30), (4, 6, 40), (0, 20, 15)):
        name = f"batch-{gpus}gpu" if gpus else "batch-cpu"
        cpus = 8 * gpus if gpus else 24
        job = JobSpec(
            name=name,
            namespace="batch",
            template=guaranteed(gpus, cpus, 32, never),
        )
        count = int(rate_h * hours * 1.5) + 5
        out.append(
            Workload(
                name,
                job,
                ArrivePoisson(rate_per_s=rate_h / 3600, count=count),
                ExponentialDuration(mean_min * 60),
            )
        )
    assert horizon > 0
    return out


def reserved_cpus(topo: NodeTopology, count: int) -> frozenset[int]:
    """The CPUs the kubelet reserves for kube/system-reserved cpu=``count``: whole cores from
    CPU 0 up, as the static CPU manager picks them."""
    cpu_topo = node_state(topo, cpu_manager_static=True).cpu_topology
    assert cpu_topo is not None
    chosen = allocate_cpus(cpu_topo, count, (), None)
    assert chosen is not None
    return frozenset(chosen)


def pools(allocation: GpuAllocation) -> list[NodePoolSpec]:
    out = []
    for name, preset, count in POOLS:
        topo = load_preset(preset)
        kubelet = KubeletConfig(
            topology_manager_policy=PolicyName.SINGLE_NUMA_NODE,
            cpu_manager_policy=CpuManagerPolicy.STATIC,
            reserved_cpus=reserved_cpus(topo, 2),
            gpu_allocation=allocation,
        )
        out.append(NodePoolSpec(name=name, topology=topo, count=count, kubelet=kubelet))
    return out


class IslandWatch:
    """At each multi-GPU binding: could the pod have had GPUs on one NVLink island inside one
    NUMA node somewhere (free GPUs only, schedulable nodes)? Pods that end up off an island while
    one was free count as misses."""

    def __init__(self, sim: Simulation) -> None:
        self.store = sim.cluster.store
        self.feasible: dict[str, bool] = {}
        sim.cluster.on_pod_change.append(self._on_pod)

    def _on_pod(self, pod: Pod) -> None:
        if pod.uid in self.feasible or pod.node_name is None or len(pod.gpu_ids) < 2:
            return
        need = len(pod.gpu_ids)
        ok = False
        for node in self.store.nodes.values():
            if not (node.ready and not node.unschedulable and not node.lost):
                continue
            free = set(self.store.free_whole_gpus(node))
            if node.name == pod.node_name:
                free |= set(pod.gpu_ids)
            numa = {g.index: g.numa for g in node.topology.gpus}
            for island in node.topology.nvlink_islands():
                by_numa: dict[object, int] = {}
                for g in island:
                    if g in free:
                        by_numa[numa[g]] = by_numa.get(numa[g], 0) + 1
                if any(n >= need for n in by_numa.values()):
                    ok = True
                    break
            if ok:
                break
        self.feasible[pod.uid] = ok


def measure(sim: Simulation, until_s: float, watch: IslandWatch) -> dict[str, float]:
    store = sim.cluster.store
    multi = island = misses = 0
    weight = weighted_bw = 0.0
    for pod in store.pods.values():
        if pod.started_s is None or len(pod.gpu_ids) < 2 or pod.node_name is None:
            continue
        topo = store.nodes[pod.node_name].topology
        islands = [set(i) for i in topo.nvlink_islands()]
        multi += 1
        on_island = any(set(pod.gpu_ids) <= i for i in islands)
        island += on_island
        misses += (not on_island) and watch.feasible.get(pod.uid, False)
        ran = (pod.finished_s if pod.finished_s is not None else until_s) - pod.started_s
        bw = best_ring(topo, list(pod.gpu_ids)).bottleneck_gbps
        weight += ran
        weighted_bw += ran * bw
    counters = sim.cluster.counters
    pending = sum(1 for p in store.pods.values() if p.is_active and p.phase is PodPhase.PENDING)
    return {
        "admission failures": counters.get("admission_rejections", 0),
        "pods recreated by controllers": counters.get("controller_replacements", 0),
        "multi-GPU pods that ran": multi,
        "share on one NVLink island": island / multi if multi else math.nan,
        "off an island while one was free": misses,
        "mean ring bottleneck GB/s": weighted_bw / weight if weight else math.nan,
        "pods pending at end": pending,
    }


def run(config: str, hours: float, seed: int) -> tuple[dict[str, float], float]:
    gpuplane = config == "gpuplane"
    profiles = (ProfileConfig.model_validate(GPUPLANE_PROFILE),) if gpuplane else ()
    settings = TwinSettings(scheduler_profiles=profiles, keep_events=False)
    allocation = GpuAllocation.GPUPLANE if gpuplane else GpuAllocation.BEST_EFFORT
    sim = build_simulation(pools(allocation), workloads(hours), seed=seed, settings=settings)
    watch = IslandWatch(sim)
    t0 = time.perf_counter()
    sim.run(hours * 3600)
    wall = time.perf_counter() - t0
    return measure(sim, hours * 3600, watch), wall


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hours", type=float, default=4.0)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args(argv)
    totals: dict[str, dict[str, list[float]]] = {"default": {}, "gpuplane": {}}
    walls: dict[str, float] = {"default": 0.0, "gpuplane": 0.0}
    for seed in range(args.seeds):
        for config in ("default", "gpuplane"):
            result, wall = run(config, args.hours, seed)
            walls[config] += wall
            for k, v in result.items():
                totals[config].setdefault(k, []).append(v)
    print(f"topology alignment: {args.hours:g} h simulated, seeds 0..{args.seeds - 1} (mean)")
    print(f"{'metric':34} {'default':>12} {'gpuplane':>12} {'ratio':>8}")
    for key in totals["default"]:
        a = sum(totals["default"][key]) / args.seeds
        b = sum(totals["gpuplane"][key]) / args.seeds
        ratio = f"{b / a:8.2f}" if a else "       -"
        print(f"{key:34} {a:12.3f} {b:12.3f} {ratio}")
    a, b = walls["default"] / args.seeds, walls["gpuplane"] / args.seeds
    print(f"{'wall time per run s':34} {a:12.3f} {b:12.3f} {b / a:8.2f}")


if __name__ == "__main__":
    main()
