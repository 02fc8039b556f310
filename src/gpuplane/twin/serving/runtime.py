"""LLM serving inside the twin: engines follow the inference pods, requests follow the traffic.

Each service (``twin.serving_spec``) owns a ``ServingSimulation`` (router + engines + request
stream). The twin keeps it in step with the cluster:

- when a pod of the service's Deployment starts its container, an engine is built for it
  (memory plan and step time from the node's GPUs, ``twin.serving_engines``) and added with a
  ready time after its cold start (image pull once per node, weight loading, engine start-up);
  the pod is Running but not Ready until then, as a vLLM pod is until ``/health`` answers;
- an engine that cannot start (weights do not fit, too few GPUs) crashes the container with
  vLLM's reason, and the kubelet restarts it with back-off (CrashLoopBackOff);
- when a pod is deleted on a healthy node (a scale-down, an eviction, a preemption) it
  terminates as Kubernetes terminates it: it is Terminating at once, its endpoint leaves the
  router (no new requests), the requests in flight run on (vLLM finishing them, as a preStop
  hook waiting for the engine to drain would let it) until it is idle or
  ``terminationGracePeriodSeconds`` (default 30 s) has passed since the deletion; then SIGKILL
  ends it and aborts what is left (counted; a broken stream is not retried). Its GPUs count as
  allocated until then (``Termination``); the twin's node frees them at deletion, a departure
  that only matters on a full node;
- when a pod fails or its node is lost its engine is removed at once and its requests are
  rerouted (the router retries a request whose engine vanished);
- every ``scrape_interval_s`` the serving simulations are advanced to the twin's clock and each
  engine's ``/metrics`` (vLLM or SGLang names) plus DCGM exporter GPU metrics are scraped into
  the cluster's series store, where PromQL (KEDA, the HPA, the report) reads them.

Advancing a serving simulation before every engine change keeps both clocks exact: requests
are simulated at their own times, not at the tick.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from gpuplane.api.pod_phase import PodPhase
from gpuplane.autoscaler.slo.analytic import AnalyticCapacity
from gpuplane.autoscaler.slo.capacity import CapacityModel
from gpuplane.core.errors import InputError
from gpuplane.core.kernel import Priority
from gpuplane.core.tsdb import MetricSample, SeriesStore, labels_of
from gpuplane.serving.engine.engine import Engine
from gpuplane.serving.engine_build import BuiltEngine
from gpuplane.serving.engine_capacity import capacity_from_engine
from gpuplane.serving.metrics.exporter import engine_samples
from gpuplane.serving.models.catalog import resolve_model
from gpuplane.serving.models.shape import ModelShape
from gpuplane.serving.routing.registry import make_router
from gpuplane.serving.routing.router import Role
from gpuplane.serving.routing.simulation import ServingSimulation, SimulationSettings
from gpuplane.serving.steptime.kv_transfer import KvLink, kv_transfer_s
from gpuplane.twin.cluster.cluster import Cluster
from gpuplane.twin.cluster.objects import Pod
from gpuplane.twin.component import Component
from gpuplane.twin.kubelet.simulator import KubeletSim
from gpuplane.twin.scenario.serving_spec import ServiceSpec, ServingSpec
from gpuplane.twin.series import SeriesRow
from gpuplane.twin.serving.pod_engine import build_engine
from gpuplane.twin.serving.series import service_rows
from gpuplane.twin.serving.summary import ServingSummary, TerminationSummary, service_summary

GIB = 1024**3


@dataclass(slots=True)
class _Engine:
    pod_uid: str
    service: str
    engine: Engine
    ready_s: float
    gpus: tuple[int, ...]
    node: str
    requested_bytes: int


@dataclass(slots=True)
class _Termination:
    """A deleted pod's engine while it drains, and how that ended."""

    engine_id: str
    num_gpus: int
    deleted_s: float
    grace_s: float
    killed_s: float | None = None
    aborted: int = 0


@dataclass(slots=True)
class _Service:
    spec: ServiceSpec
    sim: ServingSimulation
    engines: dict[str, _Engine] = field(default_factory=dict)  # pod uid
    trace_requests: int = 0
    started: int = 0
    reference: BuiltEngine | None = None  # the first engine built: sizes the SLO scaler
    arrivals: np.ndarray = field(default_factory=lambda: np.zeros(0))
    prompts: np.ndarray = field(default_factory=lambda: np.zeros(0))
    outputs: np.ndarray = field(default_factory=lambda: np.zeros(0))
    terminations: list[_Termination] = field(default_factory=list)


class ServingRuntime(Component):
    def __init__(self, cluster: Cluster, kubelet: KubeletSim, spec: ServingSpec) -> None:
        self.c = cluster
        self.kubelet = kubelet
        self.spec = spec
        self.store: SeriesStore = cluster.tsdb
        self.services: dict[str, _Service] = {}
        self._pulled: set[tuple[str, str]] = set()
        for svc in spec.services:
            settings = SimulationSettings(
                router_queue_limit=svc.router_queue_limit, seed=cluster.seed
            )
            transfer = None
            if svc.prefill_deployment is not None and svc.model:
                shape = resolve_model(svc.model)
                link = KvLink.nic(svc.kv_link_gbit_per_s)

                def transfer(tokens: int, shape: ModelShape = shape, link: KvLink = link) -> float:
                    return kv_transfer_s(tokens, shape, link)

            sim = ServingSimulation(
                make_router(svc.router),
                settings,
                prefill_router=make_router(svc.router) if transfer is not None else None,
                kv_transfer_s=transfer,
            )
            self.services[svc.name] = _Service(svc, sim)
        cluster.on_pod_change.append(self._on_pod)
        kubelet.on_container_start.append(self._on_start)

    def start(self, until_s: float) -> None:
        self.until_s = until_s
        for svc in self.services.values():
            rng = self.c.rng.stream(f"traffic-{svc.spec.name}")
            trace = svc.spec.traffic.build(until_s, rng)
            svc.trace_requests = len(trace)
            svc.arrivals, svc.prompts, svc.outputs = (
                trace.arrival_s,
                trace.prompt_tokens,
                trace.output_tokens,
            )
            svc.sim.submit(trace.requests(prefix=f"{svc.spec.name}-"))
        self.c.loop.schedule(
            self.spec.scrape_interval_s, self._tick, priority=Priority.METRICS, label="serving"
        )

    # ----- pods -----
    def _service_of(self, pod: Pod) -> _Service | None:
        if pod.template.inference is None or pod.owner is None:
            return None
        rs = self.c.store.replica_sets.get(f"{pod.owner.namespace}/{pod.owner.name}")
        deployment = rs.owner.name if rs is not None and rs.owner is not None else None
        for svc in self.services.values():
            s = svc.spec
            if s.namespace == pod.namespace and deployment in (s.deployment, s.prefill_deployment):
                return svc
        return None

    def _on_start(self, pod: Pod) -> None:
        svc = self._service_of(pod)
        if svc is not None and pod.uid not in svc.engines and pod.node_name is not None:
            self._start_engine(svc, pod)

    def _on_pod(self, pod: Pod) -> None:
        svc = self._service_of(pod)
        known = svc.engines.get(pod.uid) if svc is not None else None
        if svc is not None and known is not None and not pod.is_active:
            svc.sim.run_until(self.c.now)
            eid = known.engine.engine_id
            graceful = self._graceful(pod)
            svc.sim.remove_engine(eid, drain=graceful)
            del svc.engines[pod.uid]
            if graceful:
                grace = pod.template.termination_grace_period_s
                term = _Termination(eid, len(known.gpus), self.c.now, grace)
                svc.terminations.append(term)
                self.c.loop.after(
                    grace,
                    lambda: self._kill(svc, term),
                    priority=Priority.POD,
                    label=f"SIGKILL {pod.key}",
                )

    def _graceful(self, pod: Pod) -> bool:
        """Deleted (not failed) on a node that is still up: the kubelet runs the termination
        sequence. A lost node or a failed container ends the engine at once."""
        if not pod.is_deleted or pod.phase is not PodPhase.RUNNING or pod.node_name is None:
            return False
        node = self.c.store.nodes.get(pod.node_name)
        return node is not None and node.ready and not node.lost

    def _kill(self, svc: _Service, term: _Termination) -> None:
        """terminationGracePeriodSeconds is over: SIGKILL whatever has not drained."""
        svc.sim.run_until(self.c.now)
        if svc.sim.drained_at(term.engine_id) is not None:
            return
        term.killed_s = self.c.now
        term.aborted = svc.sim.kill_engine(
            term.engine_id,
            f"engine {term.engine_id} killed after terminationGracePeriodSeconds "
            f"({term.grace_s:g} s)",
        )
        if term.aborted:
            self.c.count("serving_requests_aborted_at_termination", term.aborted)

    def _cold_start_s(self, pod: Pod, node: str, weights_bytes: int) -> float:
        cold = self.spec.cold_start
        image = pod.template.inference.image if pod.template.inference else ""
        pull = 0.0 if (node, image) in self._pulled else cold.image_pull_s
        self._pulled.add((node, image))
        return pull + weights_bytes / (cold.storage_gbps * 1e9) + cold.init_s

    def _start_engine(self, svc: _Service, pod: Pod) -> None:
        assert pod.node_name is not None and pod.template.inference is not None
        node = self.c.store.nodes[pod.node_name]
        try:
            built = build_engine(pod, node, pod.template.inference)
        except InputError as err:
            self.c.count("engine_start_failures")
            self.kubelet.crash(pod, f"engine failed to start: {err.render()}")
            return
        role: Role = (
            "prefill" if self._deployment_of(pod) == svc.spec.prefill_deployment else "both"
        )
        if svc.spec.prefill_deployment is not None and role == "both":
            role = "decode"
        ready = self.c.now + self._cold_start_s(pod, node.name, built.plan.weights_bytes)
        svc.sim.run_until(self.c.now)
        svc.sim.add_engine(built.engine, ready_at_s=ready, role=role)
        svc.engines[pod.uid] = _Engine(
            pod.uid,
            svc.spec.name,
            built.engine,
            ready,
            tuple(node.device_slots[d].gpu for d in pod.gpu_ids),
            node.name,
            built.plan.requested_bytes,
        )
        pod.conditions["Ready"] = False
        self.c.loop.schedule(
            ready, lambda: self._ready(pod), priority=Priority.POD, label=f"ready {pod.key}"
        )
        self.c.count("engines_started")
        svc.started += 1
        if svc.reference is None:
            svc.reference = built

    def _deployment_of(self, pod: Pod) -> str | None:
        if pod.owner is None:
            return None
        rs = self.c.store.replica_sets.get(f"{pod.owner.namespace}/{pod.owner.name}")
        return rs.owner.name if rs is not None and rs.owner is not None else None

    def _ready(self, pod: Pod) -> None:
        if pod.is_active and pod.phase is PodPhase.RUNNING:
            pod.conditions["Ready"] = True
            self.c.emit("Pod", pod.name, "EngineReady", "engine serving", namespace=pod.namespace)
            self.c.pod_changed(pod)

    def summary(self) -> ServingSummary:
        return ServingSummary(
            tuple(
                service_summary(svc.spec, svc.sim.result(), svc.started, self._termination(svc))
                for svc in self.services.values()
            )
        )

    def _termination(self, svc: _Service) -> TerminationSummary:
        """Pods that terminated gracefully: drained in time or killed, the requests the kill
        aborted, and the GPU-hours the terminating pods held (deletion to drained or killed)."""
        gpu_s, drained, killed, aborted = 0.0, 0, 0, 0
        for term in svc.terminations:
            done = svc.sim.drained_at(term.engine_id)
            end = done if done is not None else term.killed_s
            if end is None:  # still draining at the end of the run
                end = min(self.c.now, term.deleted_s + term.grace_s)
            else:
                drained += done is not None
                killed += term.killed_s is not None
            aborted += term.aborted
            gpu_s += term.num_gpus * max(0.0, end - term.deleted_s)
        return TerminationSummary(
            pods=len(svc.terminations),
            drained=drained,
            killed=killed,
            requests_aborted=aborted,
            gpu_hours=round(gpu_s / 3600, 3),
        )

    def series(self, grid: Sequence[float]) -> dict[str, list[SeriesRow]]:
        """serving_timeseries.csv, from the outcomes once the run has ended (``stop``)."""
        rows: list[SeriesRow] = []
        for svc in self.services.values():
            rows += service_rows(svc.spec, svc.sim.result().outcomes, svc.arrivals, grid)
        return {"serving_timeseries.csv": rows}

    # ----- what a scaler reads -----
    def capacity_model(self, service: str) -> CapacityModel | None:
        ref = self.services[service].reference
        if ref is None:
            return None
        return AnalyticCapacity.from_figures(capacity_from_engine(ref.step_model, ref.plan))

    def cold_start_estimate(self, service: str) -> float:
        """Pull + weight loading + init of the service's engines (the worst case: a node
        without the image)."""
        svc = self.services[service]
        cold = self.spec.cold_start
        weights = svc.reference.plan.weights_bytes if svc.reference is not None else 0
        return cold.image_pull_s + weights / (cold.storage_gbps * 1e9) + cold.init_s

    def pods_of(self, service: str) -> list[tuple[Pod, float | None]]:
        """The service's active pods (main Deployment) and their engine's ready time."""
        svc = self.services[service]
        out: list[tuple[Pod, float | None]] = []
        for pod in self.c.store.pods.values():
            if (
                pod.is_active
                and self._service_of(pod) is svc
                and self._deployment_of(pod) == svc.spec.deployment
            ):
                engine = svc.engines.get(pod.uid)
                out.append((pod, engine.ready_s if engine is not None else None))
        return out

    def request_stream(self, service: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The service's requests as the router receives them: arrival times, prompt and
        output token counts (sorted by arrival)."""
        svc = self.services[service]
        return svc.arrivals, svc.prompts, svc.outputs

    def arrival_history(
        self, service: str, now: float, step_s: float, steps: int
    ) -> tuple[tuple[float, ...], float, float]:
        """Arrival rate per ``step_s`` over the last ``steps`` intervals (oldest first), and
        the mean prompt / output tokens of the requests of the last five minutes."""
        svc = self.services[service]
        edges = [now - step_s * k for k in range(steps, -1, -1)]
        counts = np.searchsorted(svc.arrivals, edges, side="right")
        rates = tuple(float(c) / step_s for c in np.diff(counts))
        lo, hi = np.searchsorted(svc.arrivals, [now - 300.0, now], side="right")
        prompt = float(svc.prompts[lo:hi].mean()) if hi > lo else 1024.0
        output = float(svc.outputs[lo:hi].mean()) if hi > lo else 256.0
        return rates, prompt, output

    # ----- time and metrics -----
    def advance(self, t_s: float) -> None:
        for svc in self.services.values():
            svc.sim.run_until(t_s)

    def stop(self, until_s: float) -> None:
        """The requests are simulated at their own times: catch up to the end of the run."""
        self.advance(until_s)

    def _tick(self) -> None:
        now = self.c.now
        self.advance(now)
        self.store.add(now, self._scrape(now))
        nxt = now + self.spec.scrape_interval_s
        if nxt <= self.until_s:
            self.c.loop.schedule(nxt, self._tick, priority=Priority.METRICS, label="serving")

    def _scrape(self, now: float) -> list[MetricSample]:
        out: list[MetricSample] = []
        for svc in self.services.values():
            # The router's own counter (vLLM production-stack's router exports it), which still
            # counts while no engine runs: what a scale-from-zero trigger must watch.
            arrived = int(np.searchsorted(svc.arrivals, now, side="right"))
            labels = labels_of({"service": svc.spec.name, "server": "router"})
            out.append(MetricSample("vllm:num_incoming_requests_total", labels, float(arrived)))
            for e in svc.engines.values():
                pod = self.c.store.pods[e.pod_uid]
                extra = {"namespace": pod.namespace, "pod": pod.name, "service": svc.spec.name}
                out.extend(engine_samples(e.engine, extra))
                out.extend(_dcgm(e, pod, now))
        return out


def _dcgm(e: _Engine, pod: Pod, now: float) -> list[MetricSample]:
    """DCGM exporter's GPU metrics for the engine's GPUs: utilisation is 100 while the engine
    has running requests (it steps back to back) and 0 while idle or loading; framebuffer used is
    what the engine preallocated (gpu_memory_utilization x total), whatever the load."""
    busy = now >= e.ready_s and e.engine.num_running() > 0
    used_mib = e.requested_bytes // (1024 * 1024) if now >= e.ready_s else 0
    out: list[MetricSample] = []
    for gpu in e.gpus:
        labels = labels_of(
            {
                "gpu": str(gpu),
                "Hostname": e.node,
                "namespace": pod.namespace,
                "pod": pod.name,
                "container": pod.template.inference.container if pod.template.inference else "",
            }
        )
        out.append(MetricSample("DCGM_FI_DEV_GPU_UTIL", labels, 100.0 if busy else 0.0))
        out.append(MetricSample("DCGM_FI_DEV_FB_USED", labels, float(used_mib)))
    return out
