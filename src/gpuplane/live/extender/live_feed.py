"""``LiveFeed``: the extender's cluster from a ``LiveCluster`` (informers) instead of relists.

``read`` builds fit's values from the informers' store, reading again only the Node and Pod
objects whose resourceVersion changed (``FitMemo``), and gives the node resourceVersions that
``ExtenderState.load`` takes. The service calls ``read`` from one task at a time, in a thread
of the default executor, after the store says it changed (``subscribe``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from gpuplane.fit.model import FitCluster
from gpuplane.k8s.cluster.fit_cluster import fit_cluster
from gpuplane.k8s.cluster.fit_memo import FitMemo
from gpuplane.k8s.cluster.fit_pools import NodeDefaults
from gpuplane.k8s.cluster.informer import InformerSettings
from gpuplane.k8s.cluster.live_cluster import LiveCluster
from gpuplane.live.extender.binder import Binder, WriterBinder
from gpuplane.live.extender.state import node_versions

IN_CLUSTER = "in-cluster"


class Feed(Protocol):
    """What the service follows: a cluster that says when it changed."""

    @property
    def ready(self) -> bool: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def subscribe(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` (from any thread) after each change."""

    def read(self) -> tuple[int, FitCluster, Mapping[str, str]]:
        """The change count, fit's values and node name -> resourceVersion, as of now."""
        ...


class LiveFeed:
    def __init__(self, live: LiveCluster, defaults: NodeDefaults) -> None:
        self.live, self.defaults = live, defaults
        self.memo = FitMemo()

    @property
    def ready(self) -> bool:
        return self.live.ready

    def start(self) -> None:
        self.live.start()

    def stop(self) -> None:
        self.live.stop()

    def subscribe(self, listener: Callable[[], None]) -> None:
        self.live.store.subscribe(listener)

    def read(self) -> tuple[int, FitCluster, Mapping[str, str]]:
        generation, snapshot = self.live.snapshot()
        return generation, fit_cluster(snapshot, self.defaults, self.memo), node_versions(snapshot)


def connect(
    kubeconfig: str,
    context: str | None,
    *,
    resync_s: float,
    defaults: NodeDefaults,
    bind: bool = False,
    watch_list: bool = False,
) -> tuple[LiveFeed, Binder | None]:
    """A feed from a kubeconfig file (or ``in-cluster``: the pod's service account), and with
    ``bind`` a binder sharing its client; a file that cannot be used is an ``InputError`` now,
    an unreachable server is retried later. ``watch_list``: the informers stream their
    initial state (watch-list) instead of listing, where the server serves it."""
    # Imported here: the client library is large (see reading.snapshot_from_kubeconfig).
    from pathlib import Path

    from gpuplane.k8s.cluster.kube_lister import KubernetesApiLister
    from gpuplane.k8s.cluster.kube_writer import KubernetesApiWriter

    if kubeconfig == IN_CLUSTER:
        client = KubernetesApiLister.in_cluster()
        source = "in-cluster"
    else:
        client = KubernetesApiLister.from_kubeconfig(Path(kubeconfig), context)
        source = f"kubeconfig {kubeconfig}" + (f" (context {context})" if context else "")
    live = LiveCluster(
        client,
        source=f"{source}, server {client.server}",
        resync_s=resync_s,
        settings=InformerSettings(watch_list=watch_list),
    )
    binder = WriterBinder(KubernetesApiWriter.for_lister(client)) if bind else None
    return LiveFeed(live, defaults), binder
