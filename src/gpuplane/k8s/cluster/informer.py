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

With ``watch_list`` (``serve extender --watch-list``), the list is a watch-list instead
(:mod:`gpuplane.k8s.cluster.api_watcher`): the initial ADDED events are gathered and replace
the store's objects at the initial-events-end BOOKMARK, whose resourceVersion the watch goes
on from; the same stream then carries the changes. A server that refuses it is listed from then
on (client-go's reflector falls back the same way); a stream that ends before the bookmark is
tried again after the backoff.

``run`` blocks: the live cluster gives each informer a daemon thread and a stop event.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from gpuplane.core.errors import GpuplaneError
from gpuplane.k8s.cluster.api_lister import RawObject
from gpuplane.k8s.cluster.api_watcher import ApiWatcher, WatchEvent, WatchExpired, WatchListRefused
from gpuplane.k8s.cluster.live_store import LiveStore, object_key

log = logging.getLogger("gpuplane.informer")
PAGE_SIZE = 500


@dataclass(frozen=True, slots=True)
class InformerSettings:
    watch_timeout_s: int = 300  # asked of the server; client-go picks 5 to 10 min
    backoff_s: float = 0.2
    max_backoff_s: float = 30.0
    watch_list: bool = False  # stream the initial state (Kubernetes 1.32+) instead of listing


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
        self.num_watch_lists = 0  # watch-lists that reached their initial-events-end bookmark
        self.watch_list = self.settings.watch_list  # off once the server refused it
        self._backoff = self.settings.backoff_s

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                if not self.resource_version and self.watch_list:
                    self._watch_list(stop)
                    continue
                if not self.resource_version:
                    self._list()
                self._watch(stop)
            except WatchListRefused as exc:
                log.info(
                    "watch-list refused; listing", extra={"resource": self.key, "why": str(exc)}
                )
                self.watch_list = False
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
                self._take(event)
        except WatchExpired as exc:
            raise _Relist(str(exc)) from None

    def _take(self, event: WatchEvent) -> None:
        """One event of a watch that is past its initial state."""
        _check(event)
        if event.type != "BOOKMARK":
            self.store.apply(self.key, event.type, event.object)
        self.resource_version = event.resource_version or self.resource_version
        self._backoff = self.settings.backoff_s

    def _watch_list(self, stop: threading.Event) -> None:
        """The initial state as events, then the watch on the same stream."""
        self.num_watches += 1
        initial: dict[str, RawObject] = {}
        synced = False
        try:
            for event in self.watcher.watch_list(
                self.path, timeout_s=self.settings.watch_timeout_s
            ):
                if stop.is_set():
                    return
                if synced:
                    self._take(event)
                    continue
                _check(event)
                if event.initial_events_end:
                    self.store.replace(self.key, initial.values())
                    self.resource_version = event.resource_version
                    self.num_watch_lists += 1
                    self._backoff = self.settings.backoff_s
                    synced = True
                elif event.type == "DELETED":
                    initial.pop(object_key(event.object), None)
                elif event.type != "BOOKMARK":
                    initial[object_key(event.object)] = event.object
        except WatchExpired as exc:
            raise _Relist(str(exc)) from None
        if not synced:
            raise _Relist("the watch-list ended before its initial events did", wait=True)


def _check(event: WatchEvent) -> None:
    if event.type == "ERROR":
        detail = str(event.object.get("message") or event.object.get("reason"))
        if event.expired:
            raise _Relist("expired: " + detail)
        raise _Relist("error: " + detail, wait=True)
