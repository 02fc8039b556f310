"""Job controller (kube-controller-manager job_controller.go), the parts that shape GPU use:

- keeps ``min(parallelism, completions - succeeded)`` pods active (work-queue jobs with no
  ``completions``: ``parallelism`` until the first success);
- failures count failed pods plus, under restartPolicy OnFailure, container restarts; more than
  ``backoffLimit`` failures -> condition Failed, reason BackoffLimitExceeded, active pods deleted;
- after a failure, new pods wait the pod-failure back-off (10 s doubling to 6 min);
- ``activeDeadlineSeconds`` -> Failed, reason DeadlineExceeded;
- ``succeeded == completions`` -> condition Complete.
"""

from __future__ import annotations

from gpuplane.api.owner import OwnerRef
from gpuplane.api.pod_phase import PodPhase
from gpuplane.core.kernel import Priority
from gpuplane.fit.workload_objects import RestartPolicy
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.objects import JobState
from gpuplane.twin.component import Component
from gpuplane.twin.controllers.runtime import sample_pod_fate
from gpuplane.twin.kubelet.simulator import KubeletSim
from gpuplane.twin.scenario.spec import Workload

KIND = "Job"


class JobController(Component):
    def __init__(
        self, cluster: Cluster, kubelet: KubeletSim, workloads: dict[str, Workload]
    ) -> None:
        self.c = cluster
        self.kubelet = kubelet
        self.workloads = workloads
        cluster.register_controller(KIND, self.sync)

    def add(self, job: JobState) -> None:
        key = f"{job.namespace}/{job.name}"
        self.c.store.jobs[key] = job
        if job.active_deadline_s is not None:
            self.c.loop.after(
                job.active_deadline_s,
                lambda: self._deadline(key),
                priority=Priority.CONTROLLER,
                label=f"deadline job {key}",
            )
        self.c.request_sync(KIND, key)

    def _counts(self, job: JobState) -> tuple[list[str], int, int]:
        pods = [self.c.store.pods[u] for u in job.pods]
        active = [p.uid for p in pods if p.is_active]
        succeeded = sum(1 for p in pods if p.phase is PodPhase.SUCCEEDED)
        failed = sum(
            1
            for p in pods
            if p.phase is PodPhase.FAILED or (p.is_deleted and p.phase is not PodPhase.SUCCEEDED)
        )
        if job.template.restart_policy is RestartPolicy.ON_FAILURE:
            failed += sum(p.restart_count for p in pods)
        return active, succeeded, failed

    def sync(self, key: str) -> None:
        job = self.c.store.jobs.get(key)
        if job is None or job.condition is not None:
            return
        active, succeeded, failed = self._counts(job)
        newly_failed = failed - job.failed
        job.succeeded, job.failed = succeeded, failed
        if failed > job.backoff_limit:
            self._fail(
                job, active, "BackoffLimitExceeded", "Job has reached the specified backoff limit"
            )
            return
        if job.completions is not None and succeeded >= job.completions:
            self._finish(job, "Complete", "Completed", f"Job completed ({succeeded} succeeded)")
            return
        if job.completions is None and succeeded > 0 and not active:
            self._finish(job, "Complete", "Completed", "Job completed (work queue drained)")
            return
        if newly_failed > 0 and failed > 0:
            s = self.c.settings
            back_off = min(
                s.job_backoff_initial_s * 2.0 ** min(failed - 1, 30), s.job_backoff_max_s
            )
            job.next_create_s = self.c.now + back_off
        if self.c.now < job.next_create_s:
            self.c.request_sync(KIND, key, delay_s=job.next_create_s - self.c.now)
            return
        if job.completions is None:
            wanted = 0 if succeeded > 0 else job.parallelism
        else:
            wanted = min(job.parallelism, job.completions - succeeded)
        creating = wanted - len(active)
        for _ in range(creating):
            self._create(job)
        replacing = min(max(creating, 0), failed - job.replacements)
        if replacing > 0:
            job.replacements += replacing
            self.c.count("controller_replacements", replacing)

    def _create(self, job: JobState) -> None:
        workload = self.workloads.get(job.workload)
        run_s, fails = sample_pod_fate(
            workload, self.c.rng.stream("pod-runtime"), job.run_s_override
        )
        pod = self.c.create_pod(
            job.template,
            namespace=job.namespace,
            generate_name=f"{job.name}-",
            owner=OwnerRef(KIND, job.name, job.namespace),
            workload=job.workload,
            run_s=run_s,
            will_fail=fails,
            extra_labels={"job-name": job.name, "batch.kubernetes.io/job-name": job.name},
        )
        job.pods.append(pod.uid)

    def _finish(self, job: JobState, condition: str, reason: str, message: str) -> None:
        job.condition = condition
        job.finished_s = self.c.now
        self.c.count(f"jobs_{condition.lower()}")
        self.c.emit(
            KIND, job.name, reason, message, namespace=job.namespace, warning=condition == "Failed"
        )

    def _fail(self, job: JobState, active: list[str], reason: str, message: str) -> None:
        for uid in active:
            pod = self.c.store.pods[uid]
            self.kubelet.delete(pod, "Killing", f"Stopping container main ({reason})")
        self._finish(job, "Failed", reason, message)

    def _deadline(self, key: str) -> None:
        job = self.c.store.jobs.get(key)
        if job is None or job.condition is not None:
            return
        active, _, _ = self._counts(job)
        self._fail(job, active, "DeadlineExceeded", "Job was active longer than specified deadline")
