"""What the kubelet does with a pod once it is bound: start it, run it, restart or finish it.

- Containers start ``pod_start_s`` after binding (image pull and start).
- When the main container's run time is up it exits 0, or 1 when the workload says it fails.
- restartPolicy Always restarts it in place; OnFailure restarts it only after a failure; Never
  ends the pod. Restarts wait the kubelet's crash-loop back-off (10 s doubling to 5 min) and
  count in ``restartCount``; a restarted container runs for a fresh run time.
- A pod that is killed (GPU failure, active deadline, eviction) ends at once; the twin releases
  its resources immediately instead of modelling the termination grace period.
- Admission: on a node whose kubelet runs a Topology Manager policy, the static CPU manager or
  the static memory manager, the kubelet admits the pod ``kubelet_admission_delay_s`` after the
  binding (the watch and sync-loop latency) through ``gpuplane.kubelet.admission``. A rejected
  pod ends Failed with the kubelet's reason (TopologyAffinityError) and status message
  "Pod was rejected: <message>"; its controller, not the scheduler, replaces it. An admitted pod
  gets its exclusive CPUs and the GPUs the device manager chose inside the NUMA affinity. On other
  nodes nothing can refuse a pod that fits, and the GPUs are the device plugin's preference at
  binding.
"""

from __future__ import annotations

from collections.abc import Callable

from gpuplane.api.pod_phase import PodPhase
from gpuplane.api.resources import NVIDIA_GPU
from gpuplane.core.kernel import Priority
from gpuplane.fit.workload_objects import RestartPolicy
from gpuplane.slicing.sharing.advertise import ADMISSION_REASON, request_error
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.objects import Node, Pod
from gpuplane.twin.component import Component
from gpuplane.twin.kubelet.admission import NodeAdmission
from gpuplane.twin.kubelet.bind_allocation import BindAllocation
from gpuplane.twin.kubelet.gpu_memory import check_start


class KubeletSim(Component):
    def __init__(self, cluster: Cluster) -> None:
        self.c = cluster
        self.admission = NodeAdmission(cluster.store)
        # Called when a pod's main container (re)starts (the serving runtime builds engines).
        self.on_container_start: list[Callable[[Pod], None]] = []

    def on_bound(self, pod: Pod, alloc: BindAllocation) -> None:
        """The pod was bound with ``alloc``: announce it, then admit or start it."""
        node = pod.node_name
        gpus = f" (GPUs {list(pod.gpu_ids)})" if pod.gpu_ids else ""
        self.c.emit(
            "Pod",
            pod.name,
            "Scheduled",
            f"Successfully assigned {pod.key} to {node}{gpus}",
            namespace=pod.namespace,
        )
        node_obj = self.c.store.nodes[pod.node_name] if pod.node_name else None
        refused = self._plugin_refusal(node_obj, pod) if node_obj is not None else None
        if refused is not None:
            self.c.loop.after(
                self.c.settings.kubelet_admission_delay_s,
                lambda: self._reject(pod, ADMISSION_REASON, refused),
                priority=Priority.POD,
                label=f"admit {pod.key}",
            )
            return
        if node_obj is not None and node_obj.kubelet.manages_resources:
            # Hold the CPUs admission will pin, so nothing else counts them as free meanwhile.
            cpus = alloc.cpu_hold
            if cpus:
                node_obj.exclusive_cpus[pod.uid] = cpus
            self.c.loop.after(
                self.c.settings.kubelet_admission_delay_s,
                lambda: self._admit(pod),
                priority=Priority.POD,
                label=f"admit {pod.key}",
            )
            return
        self._arm_start(pod, self.c.settings.pod_start_s)

    @staticmethod
    def _plugin_refusal(node: Node, pod: Pod) -> str | None:
        """The device plugin's Allocate error for the pod's request, if any."""
        if node.sharing is None:
            return None
        for resource, count in pod.requests.items():
            if resource == NVIDIA_GPU or resource in node.ext_slots:
                base = NVIDIA_GPU if resource.startswith(NVIDIA_GPU) else resource
                error = request_error(node.sharing, base, count)
                if error is not None:
                    return error
        return None

    def _reject(self, pod: Pod, reason: str, message: str) -> None:
        """The kubelet refuses the pod at admission: Failed, replaced by its controller."""
        if not pod.is_active or pod.node_name is None:
            return
        self.c.count("admission_rejections")
        self.c.emit("Pod", pod.name, reason, message, namespace=pod.namespace, warning=True)
        self.finish(pod, PodPhase.FAILED, reason, f"Pod was rejected: {message}", event=False)

    def _check_gpu_memory(self, pod: Pod) -> bool:
        """At container start: CUDA OOM on a shared GPU or MIG instance. False when the
        starting pod itself crashed."""
        if pod.node_name is None:
            return True
        node = self.c.store.nodes[pod.node_name]
        verdict = check_start(self.c.store, node, pod)
        for uid in verdict.victims:
            victim = self.c.store.pods[uid]
            self.c.count("gpu_oom_kills")
            self.c.emit(
                "Pod",
                victim.name,
                "GpuOutOfMemory",
                verdict.reason,
                namespace=victim.namespace,
                warning=True,
            )
            self._container_exited(victim, failed=True, message=verdict.reason)
        return pod.uid not in verdict.victims

    def _started(self, pod: Pod) -> None:
        for fn in self.on_container_start:
            if pod.is_active:
                fn(pod)

    def crash(self, pod: Pod, message: str) -> None:
        """The main container exits with an error now (restarted per restartPolicy)."""
        if pod.is_active and pod.phase is PodPhase.RUNNING:
            self._container_exited(pod, failed=True, message=message)

    def _arm_start(self, pod: Pod, delay_s: float) -> None:
        self.c.loop.after(
            delay_s, lambda: self._start(pod), priority=Priority.POD, label=f"start {pod.key}"
        )

    def _admit(self, pod: Pod) -> None:
        if not pod.is_active or pod.node_name is None:
            return
        node = self.c.store.nodes[pod.node_name]
        result = self.admission.admit(node, pod)
        if not result.admit:
            self._reject(pod, result.reason, result.message)
            return
        cpus = tuple(sorted({c for a in result.allocations.values() for c in a.cpus}))
        if cpus:
            node.exclusive_cpus[pod.uid] = cpus
        gpus = result.gpus
        if gpus and gpus != pod.gpu_ids and len(gpus) == len(pod.gpu_ids):
            self.c.store.move_gpus(pod, gpus)
        self.c.count("pods_admitted_aligned")
        delay = max(0.0, self.c.settings.pod_start_s - self.c.settings.kubelet_admission_delay_s)
        self._arm_start(pod, delay)

    def _start(self, pod: Pod) -> None:
        if not pod.is_active or pod.node_name is None:
            return
        pod.set_phase(PodPhase.RUNNING)
        pod.started_s = self.c.now
        pod.conditions.update(Initialized=True, ContainersReady=True, Ready=True)
        self.c.emit("Pod", pod.name, "Started", "Started container main", namespace=pod.namespace)
        self.c.pod_changed(pod)
        if self._check_gpu_memory(pod):
            self._arm_exit(pod)
            self._started(pod)

    def _arm_exit(self, pod: Pod) -> None:
        if pod.run_s is None:
            return
        restarts = pod.restart_count

        def exit_now() -> None:
            if pod.is_active and pod.restart_count == restarts and pod.phase is PodPhase.RUNNING:
                self._container_exited(pod)

        self.c.loop.after(pod.run_s, exit_now, priority=Priority.POD, label=f"exit {pod.key}")

    def _container_exited(
        self, pod: Pod, *, failed: bool | None = None, message: str | None = None
    ) -> None:
        failed = pod.will_fail if failed is None else failed
        policy = pod.template.restart_policy
        restart = policy is RestartPolicy.ALWAYS or (failed and policy is RestartPolicy.ON_FAILURE)
        if restart:
            pod.restart_count += 1
            back_off = min(
                self.c.settings.crashloop_initial_s * 2.0 ** min(pod.restart_count - 1, 30),
                self.c.settings.crashloop_max_s,
            )
            reason = "BackOff" if failed else "Completed"
            self.c.emit(
                "Pod",
                pod.name,
                reason,
                f"Back-off {back_off:g}s restarting container main (exit code "
                f"{1 if failed else 0}{': ' + message if message else ''})",
                namespace=pod.namespace,
                warning=failed,
            )
            self.c.count("container_restarts")
            self.c.pod_changed(pod)
            self.c.loop.after(
                back_off,
                lambda: self._restart(pod),
                priority=Priority.POD,
                label=f"restart {pod.key}",
            )
            return
        if failed:
            self.finish(
                pod, PodPhase.FAILED, "Error", message or "container main exited with code 1"
            )
        else:
            self.finish(pod, PodPhase.SUCCEEDED, "Completed", "container main exited with code 0")

    def _restart(self, pod: Pod) -> None:
        if pod.is_active and pod.node_name is not None:
            self.c.emit(
                "Pod", pod.name, "Started", "Started container main", namespace=pod.namespace
            )
            if self._check_gpu_memory(pod):
                self._arm_exit(pod)
                self._started(pod)

    def finish(
        self, pod: Pod, phase: PodPhase, reason: str, message: str, *, event: bool = True
    ) -> None:
        """End a pod in a terminal phase and give its resources back."""
        if not pod.is_active:
            return
        pod.set_phase(phase, reason, message)
        pod.finished_s = self.c.now
        pod.conditions.update(Ready=False, ContainersReady=False)
        self.c.store.release(pod)
        self.c.count(f"pods_{phase.value.lower()}")
        if phase is PodPhase.FAILED and event:
            self.c.emit("Pod", pod.name, reason, message, namespace=pod.namespace, warning=True)
        self.c.pod_changed(pod)
        self.c.cluster_changed()

    def delete(self, pod: Pod, reason: str, message: str, *, warning: bool = False) -> None:
        """Delete a pod object (controller scale-down, eviction, drain, job cleanup)."""
        if pod.is_deleted:
            return
        pod.deleted_s = self.c.now
        if pod.phase not in (PodPhase.SUCCEEDED, PodPhase.FAILED):
            pod.finished_s = self.c.now
        was_bound = pod.node_name is not None
        # The record leaves the books: release whatever it held on its node.
        if was_bound:
            node = self.c.store.nodes[pod.node_name] if pod.node_name else None
            if node is not None and pod.uid in node.pods:
                self.c.store.release(pod)
        self.c.count("pods_deleted")
        self.c.emit("Pod", pod.name, reason, message, namespace=pod.namespace, warning=warning)
        self.c.pod_changed(pod)
        self.c.cluster_changed()
