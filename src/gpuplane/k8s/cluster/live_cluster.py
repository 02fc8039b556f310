"""``LiveCluster``: the catalogue's resources kept current from a live API server.

- Nodes, Pods, NodeResourceTopologies and ResourceSlices (what changes while pods are being
  scheduled) each have an ``Informer``: list, then watch, in a daemon thread of its own.
- The other resources (PriorityClasses, Namespaces, Services and workload controllers,
  DeviceClasses, ResourceClaims, PodGroups...) change rarely and are listed again every
  ``resync_s`` by one poller thread, which writes to the store only when a resourceVersion
  differs.
- Discovery (which groups and versions the server serves) runs first, retried with backoff
  while the server is unreachable. ``ready`` is true once every served resource has been
  listed once; resources the server does not serve are ``skipped`` as ``read_live`` skips
  them.
"""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime
from typing import Protocol

from gpuplane.core.errors import GpuplaneError
from gpuplane.k8s.cluster.api_lister import ApiLister, ListNotFound
from gpuplane.k8s.cluster.api_watcher import ApiWatcher
from gpuplane.k8s.cluster.catalogue import READ_RESOURCES, SNAPSHOT_KEYS, ListedResource
from gpuplane.k8s.cluster.informer import Informer, InformerSettings
from gpuplane.k8s.cluster.live_reader import list_all, served_version
from gpuplane.k8s.cluster.live_store import LiveStore
from gpuplane.k8s.cluster.snapshot import ClusterSnapshot, Skipped

log = logging.getLogger("gpuplane.informer")
WATCHED = frozenset({"nodes", "pods", "nodeResourceTopologies", "resourceSlices"})


class ListerWatcher(ApiLister, ApiWatcher, Protocol):
    """The seam's both halves (``KubernetesApiLister`` is one)."""


class LiveCluster:
    def __init__(
        self,
        client: ListerWatcher,
        *,
        source: str,
        resync_s: float = 60.0,
        settings: InformerSettings | None = None,
    ) -> None:
        self.client, self.source, self.resync_s = client, source, resync_s
        self.settings = settings or InformerSettings()
        self.store = LiveStore()
        self.informers: dict[str, Informer] = {}
        self._served: dict[str, tuple[ListedResource, str]] = {}
        self._skipped: list[Skipped] = []
        self._server_version: str | None = None
        self._discovered = threading.Event()
        self._stop = threading.Event()
        self._polled: dict[str, tuple[tuple[str, str], ...]] = {}

    def start(self) -> None:
        threading.Thread(target=self._main, name="informer-main", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    @property
    def ready(self) -> bool:
        return self._discovered.is_set() and self.store.listed(self._served)

    def _main(self) -> None:
        backoff = self.settings.backoff_s
        while not self._stop.is_set():
            try:
                self._discover()
                break
            except GpuplaneError as exc:
                log.warning("discovery failed; retrying", extra={"error": str(exc)})
                self._stop.wait(backoff)
                backoff = min(backoff * 2, self.settings.max_backoff_s)
        for key, (res, version) in self._served.items():
            if key in WATCHED:
                informer = Informer(self.client, self.store, key, res.path(version), self.settings)
                self.informers[key] = informer
                name = f"informer-{key}"
                threading.Thread(
                    target=informer.run, args=(self._stop,), name=name, daemon=True
                ).start()
        self._discovered.set()
        self.store.touch()  # informers' lists may all have landed before this
        while not self._stop.is_set():
            self._poll()
            if not self.resync_s or self._stop.wait(self.resync_s):
                break

    def _discover(self) -> None:
        cache: dict[str, tuple[str, ...] | None] = {}
        served: dict[str, tuple[ListedResource, str]] = {}
        skipped: list[Skipped] = []
        for res in READ_RESOURCES:
            version = served_version(self.client, res, cache)
            if isinstance(version, Skipped):
                skipped.append(version)
            else:
                served[res.key] = (res, version)
        self._server_version = self.client.server_version()
        self._served, self._skipped = served, skipped

    def _poll(self) -> None:
        """List every resource no informer keeps; write those whose versions changed."""
        for key, (res, version) in self._served.items():
            if key in WATCHED or self._stop.is_set():
                continue
            try:
                objects = list_all(self.client, res, version)
            except ListNotFound:
                objects = ()
            except GpuplaneError as exc:
                log.warning("list failed", extra={"resource": key, "error": str(exc)})
                continue
            versions = tuple(sorted(_identity(o) for o in objects))
            if self._polled.get(key) != versions:
                self._polled[key] = versions
                self.store.replace(key, objects)

    def snapshot(self) -> tuple[int, ClusterSnapshot]:
        """The store as a snapshot, and the store generation it was read at."""
        generation, objects = self.store.read()
        versions = {k: res.api_version(v) for k, (res, v) in self._served.items()}
        return generation, ClusterSnapshot(
            source=self.source,
            read_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            server_version=self._server_version,
            api_versions=versions,
            skipped=tuple(self._skipped),
            objects={k: objects.get(k, ()) for k in SNAPSHOT_KEYS},
        )


def _identity(obj: dict[str, object]) -> tuple[str, str]:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    return str(meta.get("uid") or meta.get("name") or ""), str(meta.get("resourceVersion") or "")
