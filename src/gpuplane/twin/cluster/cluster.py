"""The running cluster: event loop, object store, randomness, names, events and the wiring that
lets components ask each other for work (a scheduling cycle, a controller sync).

Components never call each other's handlers directly: work for another component (a controller
sync, a scheduling cycle, a SIGKILL after the grace period) is asked for as an event, so every
change is ordered by the kernel and the run stays deterministic. The one synchronous path is a
watch: ``pod_changed`` and ``cluster_changed`` call the hooks the run's wiring registered in
``on_pod_change`` / ``on_cluster_change``, at once and in registration order, as an informer
calls its event handlers. A hook only brings its own component's caches up to date (the
scheduling queue and snapshot cache, a pod's ResourceClaims, an engine leaving its router) and
asks for work as events; it never runs another component's handler, and the change itself has
already been made when it runs. docs/twin.md, "Objects and books", says why this is not an event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Protocol

from gpuplane.api.owner import OwnerRef
from gpuplane.core.kernel import EventLoop, Priority
from gpuplane.core.rng import RngStreams
from gpuplane.core.tsdb import SeriesStore
from gpuplane.fit.resources import pod_requests
from gpuplane.fit.workload_objects import POD_GROUP_LABEL, PodTemplate
from gpuplane.slicing.dra.claims import ResourceClaim
from gpuplane.slicing.dra.snapshot import DraSnapshot, PendingAllocation
from gpuplane.twin.cluster.events import EventRecorder
from gpuplane.twin.cluster.names import NameFactory
from gpuplane.twin.cluster.objects import Node, Pod
from gpuplane.twin.cluster.qos import qos_class
from gpuplane.twin.cluster.store import ObjectStore
from gpuplane.twin.scenario.settings import TwinSettings


class DraObjects(Protocol):
    """The cluster's DRA objects as the scheduler reads and writes them.

    ``twin.dra.state.DraState`` is the one implementation; the cluster names only what it
    offers, so the DRA room sits above the cluster instead of in a circle with it.
    """

    def snapshot(self, nodes: list[Node], pods: list[Pod]) -> DraSnapshot: ...

    def apply(
        self, written: Iterable[ResourceClaim], pending: Mapping[str, PendingAllocation]
    ) -> None: ...

    def gpus_of(self, pod: Pod) -> list[tuple[int, str]]: ...


class Cluster:
    def __init__(self, settings: TwinSettings, seed: int) -> None:
        self.settings = settings
        self.seed = seed
        self.loop = EventLoop()
        self.store = ObjectStore()
        self.rng = RngStreams(seed)
        self.names = NameFactory(self.rng.stream("names"))
        self.events = EventRecorder(keep=settings.keep_events)
        self.generation = 0
        self.counters: dict[str, int] = {}
        self._syncs: set[tuple[str, str]] = set()
        self._sync_handlers: dict[str, Callable[[str], None]] = {}
        self.on_pod_change: list[Callable[[Pod], None]] = []
        self.on_cluster_change: list[Callable[[], None]] = []
        # DRA objects and the resourceclaim controller (None: no DRA in this scenario).
        self.dra: DraObjects | None = None
        # Prometheus's view of the cluster: engines' and exporters' series (PromQL reads it).
        self.tsdb = SeriesStore()

    @property
    def now(self) -> float:
        return self.loop.now_s

    def count(self, key: str, n: int = 1) -> None:
        self.counters[key] = self.counters.get(key, 0) + n

    def emit(
        self,
        kind: str,
        name: str,
        reason: str,
        message: str,
        *,
        namespace: str = "",
        warning: bool = False,
    ) -> None:
        self.events.record(
            self.now, kind, name, reason, message, namespace=namespace, warning=warning
        )

    # ----- controller syncs -----
    def register_controller(self, kind: str, sync: Callable[[str], None]) -> None:
        self._sync_handlers[kind] = sync

    def request_sync(self, kind: str, key: str, delay_s: float = 0.0) -> None:
        """Ask controller ``kind`` to reconcile ``key`` (deduplicated per pending request)."""
        if delay_s <= 0 and (kind, key) in self._syncs:
            return
        if delay_s <= 0:
            self._syncs.add((kind, key))

        def run() -> None:
            if delay_s <= 0:
                self._syncs.discard((kind, key))
            self._sync_handlers[kind](key)

        self.loop.after(delay_s, run, priority=Priority.CONTROLLER, label=f"sync {kind} {key}")

    # ----- notifications -----
    def pod_changed(self, pod: Pod) -> None:
        """A pod's state changed (the caller has applied it): its owner gets a sync event, and
        every ``on_pod_change`` hook sees the pod now, before the caller goes on."""
        if not pod.is_active:
            self.store.active.discard(pod.uid)
        if pod.owner is not None:
            self.request_sync(pod.owner.kind, f"{pod.owner.namespace}/{pod.owner.name}")
        for fn in self.on_pod_change:
            fn(pod)

    def cluster_changed(self, *, nodes: bool = False) -> None:
        """Something freed resources or changed nodes: unschedulable pods get another chance."""
        if nodes:
            self.generation += 1
        for fn in self.on_cluster_change:
            fn()

    def node_refresh(self, node: Node, *, static: bool = False) -> None:
        self.store.refresh_node(node)
        self.cluster_changed(nodes=static)

    # ----- pods -----
    def create_pod(
        self,
        template: PodTemplate,
        *,
        namespace: str,
        name: str | None = None,
        generate_name: str | None = None,
        owner: OwnerRef | None = None,
        workload: str = "",
        run_s: float | None = None,
        will_fail: bool = False,
        extra_labels: dict[str, str] | None = None,
    ) -> Pod:
        if name is None:
            name = self.names.generate(generate_name or "pod-")
        if extra_labels:
            template = _with_labels(template, extra_labels)
        pod = Pod(
            uid=self.names.uid(),
            name=name,
            namespace=namespace,
            template=template,
            requests=pod_requests(template),
            qos=qos_class(template),
            created_s=self.now,
            owner=owner,
            pod_group=template.labels.get(POD_GROUP_LABEL),
            workload=workload,
            run_s=run_s,
            will_fail=will_fail,
        )
        self.store.add_pod(pod)
        self.count("pods_created")
        if owner is not None:
            self.emit(
                owner.kind,
                owner.name,
                "SuccessfulCreate",
                f"Created pod: {name}",
                namespace=namespace,
            )
        for fn in self.on_pod_change:
            fn(pod)
        return pod


def _with_labels(template: PodTemplate, labels: dict[str, str]) -> PodTemplate:
    return replace(template, labels={**template.labels, **labels})
