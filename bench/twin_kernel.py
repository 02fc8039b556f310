"""Benchmark: twin events per second on a 1,000-node cluster, against the bare kernel.

Run: ``.venv/bin/python bench/twin_kernel.py`` (``make bench-twin``). In one process it times
(1) the bare event loop running no-op events (the floor: heap push/pop and a call), and (2) the
twin on 1,000 seed-style 8-GPU nodes with Poisson-arriving Jobs and long-running Deployments
for a simulated day, and prints events per second for both and their ratio.
"""

from __future__ import annotations

import time

from gpuplane.core.kernel import EventLoop
from gpuplane.fit.workload_objects import (
    ContainerSpec,
    DeploymentSpec,
    JobSpec,
    PodTemplate,
    RestartPolicy,
)
from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.topology.presets import load_preset
from gpuplane.twin.build import build_simulation
from gpuplane.twin.scenario.settings import TwinSettings
from gpuplane.twin.scenario.spec import ArrivePoisson, ExponentialDuration, NodePoolSpec, Workload
from gpuplane.twin.summary import RunSummary

DAY = 86400.0


def bare_kernel(num_events: int) -> float:
    loop = EventLoop()
    for i in range(num_events):
        loop.schedule(float(i % 5000), _noop, priority=i % 7, label="noop")
    t0 = time.perf_counter()
    loop.run(1e9)
    return num_events / (time.perf_counter() - t0)


def _noop() -> None:
    return None


def template(gpus: int, restart: RestartPolicy) -> PodTemplate:
    req = {"cpu": 8000, "memory": 64 * 2**30, "nvidia.com/gpu": gpus}
    return PodTemplate(
        containers=(ContainerSpec("main", requests=req, limits={"nvidia.com/gpu": gpus}),),
        restart_policy=restart,
    )


def workloads() -> list[Workload]:
    out = []
    for gpus in (1, 2, 4, 8):
        job = JobSpec(
            name=f"train-{gpus}g",
            namespace="ml",
            template=template(gpus, RestartPolicy.NEVER),
            completions=4,
            parallelism=2,
            backoff_limit=6,
        )
        out.append(
            Workload(
                f"train-{gpus}g",
                job,
                ArrivePoisson(rate_per_s=1 / 45, count=4000),
                ExponentialDuration(3600),
                failure_probability=0.05,
            )
        )
    for i in range(20):
        dep = DeploymentSpec(
            name=f"serve-{i}",
            namespace="serving",
            template=template(2, RestartPolicy.ALWAYS),
            replicas=50,
        )
        out.append(Workload(f"serve-{i}", dep))
    return out


# GPU bin-packing, the profile GPU platform teams configure (kube's default LeastAllocated on
# cpu/memory spreads small GPU pods over every node; see docs/benchmarks.md).
GPU_PACKING = ProfileConfig.model_validate(
    {
        "schedulerName": "default-scheduler",
        "pluginConfig": [
            {
                "name": "NodeResourcesFit",
                "args": {
                    "scoringStrategy": {
                        "type": "MostAllocated",
                        "resources": [
                            {"name": "nvidia.com/gpu", "weight": 3},
                            {"name": "cpu", "weight": 1},
                        ],
                    }
                },
            }
        ],
    }
)


def twin(num_nodes: int) -> tuple[float, int, float, RunSummary]:
    pool = NodePoolSpec(name="seed", topology=load_preset("seed-8gpu"), count=num_nodes)
    sim = build_simulation(
        [pool],
        workloads(),
        seed=1,
        name="bench",
        settings=TwinSettings(scheduler_profiles=(GPU_PACKING,)),
    )
    t0 = time.perf_counter()
    result = sim.run(DAY)
    wall = time.perf_counter() - t0
    return result.num_events / wall, result.num_events, wall, result.summary


def main() -> None:
    base = bare_kernel(300_000)
    rate, events, wall, summary = twin(1000)
    print(
        "twin kernel benchmark (1,000 seed-8gpu nodes = 8,000 GPUs, one simulated day, "
        "scheduler framework with GPU bin-packing)"
    )
    print(f"  bare kernel, no-op events      : {base:12,.0f} events/s")
    print(
        f"  twin, full cluster             : {rate:12,.0f} events/s "
        f"({events:,} events in {wall:.1f} s wall)"
    )
    print(f"  ratio (bare / twin)            : {base / rate:12.1f}x")
    print(
        f"  pods created {summary.pods.created:,}, GPU allocation ratio "
        f"{summary.gpus.allocation_ratio}"
    )


if __name__ == "__main__":
    main()
