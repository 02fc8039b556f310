"""``Informer`` on a scripted ``ApiWatcher``: events applied, versions followed, a relist on
410 (event or HTTP), a re-watch from the last version when a stream drops; with watch-list, the
initial events replace the store at the initial-events-end bookmark, and a refusal lists."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

from gpuplane.core.errors import UnavailableError
from gpuplane.k8s.cluster.api_lister import RawObject
from gpuplane.k8s.cluster.api_watcher import (
    INITIAL_EVENTS_END,
    Listed,
    WatchEvent,
    WatchExpired,
    WatchListRefused,
)
from gpuplane.k8s.cluster.informer import Informer, InformerSettings
from gpuplane.k8s.cluster.live_store import LiveStore

FAST = InformerSettings(watch_timeout_s=1, backoff_s=0.0, max_backoff_s=0.0)


def _pod(name: str, version: str) -> RawObject:
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": version}}


Step = list[WatchEvent] | Exception  # one watch: its events, or what it raises at the start


@dataclass
class Script:
    """Lists answer from ``lists`` in turn; watches play ``watches`` in turn, then the
    informer is stopped."""

    lists: list[Listed]
    watches: list[Step]
    stop: threading.Event = field(default_factory=threading.Event)
    calls: list[tuple[str, str]] = field(default_factory=list)
    watch_lists: list[Step] = field(default_factory=list)

    def list_versioned(self, path: str, *, limit: int) -> Listed:
        self.calls.append(("list", ""))
        return self.lists.pop(0)

    def watch(self, path: str, resource_version: str, *, timeout_s: int) -> Iterator[WatchEvent]:
        self.calls.append(("watch", resource_version))
        if not self.watches:
            self.stop.set()
            return
        step = self.watches.pop(0)
        if isinstance(step, Exception):
            raise step
        yield from step

    def watch_list(self, path: str, *, timeout_s: int) -> Iterator[WatchEvent]:
        self.calls.append(("watch-list", ""))
        if not self.watch_lists:
            self.stop.set()
            return
        step = self.watch_lists.pop(0)
        if isinstance(step, Exception):
            raise step
        yield from step


def _run(script: Script, settings: InformerSettings = FAST) -> tuple[Informer, LiveStore]:
    store = LiveStore()
    informer = Informer(script, store, "pods", "/api/v1/pods", settings)
    informer.run(script.stop)
    return informer, store


def _names(store: LiveStore) -> dict[str, str]:
    return {
        f"{o['metadata']['namespace']}/{o['metadata']['name']}": o["metadata"]["resourceVersion"]
        for o in store.read()[1]["pods"]
    }


def test_events_and_bookmarks_move_the_version() -> None:
    script = Script(
        lists=[Listed((_pod("a", "5"),), "10")],
        watches=[
            [
                WatchEvent("ADDED", _pod("b", "11")),
                WatchEvent("MODIFIED", _pod("a", "12")),
                WatchEvent("BOOKMARK", {"metadata": {"resourceVersion": "20"}}),
            ],
            [WatchEvent("DELETED", _pod("b", "21"))],
        ],
    )
    informer, store = _run(script)
    assert script.calls == [("list", ""), ("watch", "10"), ("watch", "20"), ("watch", "21")]
    assert _names(store) == {"ns/a": "12"}
    assert informer.resource_version == "21"
    assert store.listed(["pods"])


def test_an_expired_event_or_a_410_lists_again() -> None:
    gone = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}
    script = Script(
        lists=[Listed((_pod("a", "5"),), "10"), Listed((), "30"), Listed((_pod("c", "41"),), "40")],
        watches=[[WatchEvent("ERROR", gone)], WatchExpired("/api/v1/pods")],
    )
    informer, store = _run(script)
    assert script.calls == [
        ("list", ""),
        ("watch", "10"),
        ("list", ""),
        ("watch", "30"),
        ("list", ""),
        ("watch", "40"),
    ]
    assert informer.num_lists == 3
    assert _names(store) == {"ns/c": "41"}


def test_a_dropped_stream_watches_again_from_the_last_version() -> None:
    script = Script(
        lists=[Listed((), "10")],
        watches=[[WatchEvent("ADDED", _pod("a", "11"))], UnavailableError("connection reset")],
    )
    _run(script)
    assert script.calls == [("list", ""), ("watch", "10"), ("watch", "11"), ("watch", "11")]


def test_another_error_event_lists_again() -> None:
    status = {"kind": "Status", "code": 500, "message": "etcd is sad"}
    script = Script(
        lists=[Listed((), "10"), Listed((), "50")],
        watches=[[WatchEvent("ERROR", status)]],
    )
    _run(script)
    assert script.calls == [("list", ""), ("watch", "10"), ("list", ""), ("watch", "50")]


WATCH_LIST = InformerSettings(watch_timeout_s=1, backoff_s=0.0, max_backoff_s=0.0, watch_list=True)


def _end(version: str) -> WatchEvent:
    meta = {"resourceVersion": version, "annotations": {INITIAL_EVENTS_END: "true"}}
    return WatchEvent("BOOKMARK", {"kind": "Pod", "apiVersion": "v1", "metadata": meta})


def test_watch_list_replaces_the_store_at_the_end_bookmark_then_watches() -> None:
    script = Script(
        lists=[],
        watches=[[WatchEvent("MODIFIED", _pod("b", "31"))]],
        watch_lists=[
            [
                WatchEvent("ADDED", _pod("a", "5")),
                WatchEvent("BOOKMARK", {"metadata": {"resourceVersion": "8"}}),  # not the end
                WatchEvent("ADDED", _pod("b", "7")),
                _end("20"),
                WatchEvent("DELETED", _pod("a", "25")),
            ]
        ],
    )
    informer, store = _run(script, WATCH_LIST)
    assert script.calls == [("watch-list", ""), ("watch", "25"), ("watch", "31")]
    assert _names(store) == {"ns/b": "31"}
    assert (informer.num_lists, informer.num_watch_lists) == (0, 1)


def test_a_watch_list_cut_before_its_end_is_tried_again_and_a_refusal_lists() -> None:
    script = Script(
        lists=[Listed((_pod("c", "41"),), "40")],
        watches=[],
        watch_lists=[
            [WatchEvent("ADDED", _pod("a", "5"))],  # the stream ends before the bookmark
            WatchListRefused("/api/v1/pods", "sendInitialEvents is forbidden"),
        ],
    )
    informer, store = _run(script, WATCH_LIST)
    assert script.calls == [("watch-list", ""), ("watch-list", ""), ("list", ""), ("watch", "40")]
    assert _names(store) == {"ns/c": "41"}
    assert not informer.watch_list and informer.num_watch_lists == 0
