"""``Informer``: one resource kept in a ``LiveStore`` by list, then watch, as client-go's
reflector does (tools/cache/reflector.go, ListAndWatch):

- list (paged), replace the store's objects, remember the list's resourceVersion;
- watch from it with bookmarks; apply each ADDED/MODIFIED/DELETED, and take the
  resourceVersion of every event and BOOKMARK, so a re-watch resumes where the last ended;
- when the server ends the stream (``timeoutSeconds``), watch again from there at once;
- an ERROR with code 410 (or an HTTP 410) means the version is gone from the server's
  watch cache: list again, and watch from the new list;
- a dropped connection or a failed request: wait (exponential backoff, 0.2 s doubling to
  30 s, reset by any event) and re-watch from the last resourceVersion, or list again if no
  list has succeeded yet. Any other ERROR event lists again, after the backoff.

``run`` blocks: the live cluster gives each informer a daemon thread and a stop event.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from gpuplane.core.errors import GpuplaneError
from gpuplane.k8s.cluster.api_watcher import ApiWatcher, WatchExpired
from gpuplane.k8s.cluster.live_store import LiveStore

log = logging.getLogger("gpuplane.informer")
PAGE_SIZE = 500


@dataclass(frozen=True, slots=True)
class InformerSettings:
    watch_timeout_s: int = 300  # asked of the server; client-go picks 5 to 10 min
    backoff_s: float = 0.2
    max_backoff_s: float = 30.0


class _Relist(Exception):
    """The watch cannot go on from its resourceVersion (``wait``: back off first)."""

    def __init__(self, why: str, *, wait: bool = False) -> None:
        super().__init__(why)
        self.wait = wait


class Informer:
    def __init__(
        self,
        watcher: ApiWatcher,
        store: LiveStore,
        key: str,
        path: str,
        settings: InformerSettings | None = None,
    ) -> None:
        self.watcher, self.store, self.key, self.path = watcher, store, key, path
        self.settings = settings or InformerSettings()
        self.resource_version = ""
        self.num_lists = 0
        self.num_watches = 0
        self._backoff = self.settings.backoff_s

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                if not self.resource_version:
                    self._list()
                self._watch(stop)
            except _Relist as why:
                log.info("relisting", extra={"resource": self.key, "why": str(why)})
                self.resource_version = ""
                if why.wait:
                    self._pause(stop)
            except GpuplaneError as exc:  # the server unreachable, a refused list, a drop
                log.warning(
                    "watch failed; retrying", extra={"resource": self.key, "error": str(exc)}
                )
                self._pause(stop)

    def _pause(self, stop: threading.Event) -> None:
        stop.wait(self._backoff)
        self._backoff = min(self._backoff * 2, self.settings.max_backoff_s)

    def _list(self) -> None:
        listed = self.watcher.list_versioned(self.path, limit=PAGE_SIZE)
        self.num_lists += 1
        self.store.replace(self.key, listed.items)
        self.resource_version = listed.resource_version
        self._backoff = self.settings.backoff_s

    def _watch(self, stop: threading.Event) -> None:
        self.num_watches += 1
        timeout_s = self.settings.watch_timeout_s
        try:
            for event in self.watcher.watch(self.path, self.resource_version, timeout_s=timeout_s):
                if stop.is_set():
                    return
                if event.type == "ERROR":
                    detail = str(event.object.get("message") or event.object.get("reason"))
                    if event.expired:
                        raise _Relist("expired: " + detail)
                    raise _Relist("error: " + detail, wait=True)
                if event.type != "BOOKMARK":
                    self.store.apply(self.key, event.type, event.object)
                self.resource_version = event.resource_version or self.resource_version
                self._backoff = self.settings.backoff_s
        except WatchExpired as exc:
            raise _Relist(str(exc)) from None
