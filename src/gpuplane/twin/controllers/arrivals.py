"""Turn each workload's arrival process into object creations at simulated times.

The first copy of an object keeps its manifest name; later copies get ``-<n>`` appended (the way
a CronJob names the Jobs it creates), so every object name is unique and stable for a seed.
Poisson arrivals draw from the workload's own RNG stream, so adding a workload does not shift
another workload's arrival times.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpuplane.core.kernel import Priority
from gpuplane.fit.workload_objects import (
    DeploymentSpec,
    JobSpec,
    PodGroupSpec,
    PodSpecObject,
    ReplicaSetSpec,
)
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.objects import JobState, PodGroupState
from gpuplane.twin.component import Component
from gpuplane.twin.controllers.deployment import DeploymentController
from gpuplane.twin.controllers.job import JobController
from gpuplane.twin.controllers.podgroup import PodGroupController
from gpuplane.twin.controllers.runtime import sample_pod_fate
from gpuplane.twin.scenario.spec import ArriveAt, ArriveFromTrace, ArrivePoisson, Workload


def arrival_times(workload: Workload, rng: np.random.Generator) -> list[tuple[float, float | None]]:
    """(time, run-time override) of every copy the workload creates."""
    arrival = workload.arrival
    if isinstance(arrival, ArriveAt):
        return [(arrival.t_s, None)]
    if isinstance(arrival, ArrivePoisson):
        gaps = rng.exponential(1.0 / arrival.rate_per_s, size=arrival.count)
        return [(float(t), None) for t in arrival.start_s + np.cumsum(gaps)]
    assert isinstance(arrival, ArriveFromTrace)
    return [(row.t_s, row.duration_s) for row in arrival.rows]


class Arrivals(Component):
    def __init__(
        self,
        cluster: Cluster,
        deployments: DeploymentController,
        jobs: JobController,
        pod_groups: PodGroupController,
        workloads: tuple[Workload, ...] = (),
    ) -> None:
        self.c = cluster
        self.deployments = deployments
        self.jobs = jobs
        self.pod_groups = pod_groups
        self.workloads = workloads

    def start(self, until_s: float) -> None:
        """Schedule the creation of every copy of every workload up to ``until_s``."""
        for workload in self.workloads:
            rng = self.c.rng.stream(f"arrivals/{workload.name}")
            for n, (t_s, run_override) in enumerate(arrival_times(workload, rng)):
                if t_s > until_s:
                    break
                self.c.loop.schedule(
                    t_s,
                    self._creator(workload, n, run_override),
                    priority=Priority.ARRIVAL,
                    label=f"arrive {workload.name}#{n}",
                )

    def _creator(
        self, workload: Workload, n: int, run_override: float | None
    ) -> Callable[[], None]:
        return lambda: self.create(workload, n, run_override)

    def create(self, workload: Workload, n: int, run_override: float | None) -> None:
        obj = workload.obj
        name = obj.name if n == 0 else f"{obj.name}-{n}"
        self.c.count("arrivals")
        if isinstance(obj, PodSpecObject):
            run_s, fails = sample_pod_fate(workload, self.c.rng.stream("pod-runtime"), run_override)
            generated = obj.name.endswith("-")  # metadata.generateName only
            self.c.create_pod(
                obj.template,
                namespace=obj.namespace,
                name=None if generated else name,
                generate_name=obj.name if generated else None,
                workload=workload.name,
                run_s=run_s,
                will_fail=fails,
            )
        elif isinstance(obj, JobSpec):
            self.jobs.add(
                JobState(
                    name=name,
                    namespace=obj.namespace,
                    template=obj.template,
                    completions=obj.completions,
                    parallelism=obj.parallelism,
                    backoff_limit=obj.backoff_limit,
                    active_deadline_s=obj.active_deadline_s,
                    workload=workload.name,
                    created_s=self.c.now,
                    run_s_override=run_override,
                )
            )
        elif isinstance(obj, DeploymentSpec):
            self.deployments.create(obj, name, workload.name)
        elif isinstance(obj, ReplicaSetSpec):
            self.deployments.create_replica_set(obj, name, workload.name)
        else:
            assert isinstance(obj, PodGroupSpec)
            self.pod_groups.add(
                PodGroupState(
                    name=name,
                    namespace=obj.namespace,
                    min_member=obj.min_member,
                    schedule_timeout_s=obj.schedule_timeout_s,
                    created_s=self.c.now,
                )
            )
