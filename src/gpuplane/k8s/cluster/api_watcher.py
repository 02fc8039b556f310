"""The watch side of the client seam: a list that says its resourceVersion, and a watch from it.

An API server watch (``GET PATH?watch=1&resourceVersion=RV``) streams one JSON object a line,
``{"type": ..., "object": ...}``, until ``timeoutSeconds`` or the connection ends:

- ``ADDED``/``MODIFIED``/``DELETED`` carry the whole object at its new resourceVersion;
- ``BOOKMARK`` (asked for with ``allowWatchBookmarks=true``) carries only
  ``metadata.resourceVersion``: nothing changed up to there, resume from it;
- ``ERROR`` carries a ``Status``; code 410 (reason ``Expired``/``Gone``) means RV is older than
  the server's watch cache keeps, and the client must list again (client-go's reflector does
  the same: ``isExpiredError`` -> relist).

Watch-list (``watch_list``; KEP-3157, beta and on by default in Kubernetes 1.32, alpha from
1.27 behind the ``WatchList`` feature gate) replaces the list: ``GET
PATH?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true``
streams every existing object as an ADDED event, then a BOOKMARK annotated
``k8s.io/initial-events-end: "true"`` whose resourceVersion is that of the state just sent,
then the changes after it, as a watch does. The server builds it from its watch cache, in
constant memory, instead of a paged list from etcd. A server without the feature refuses the
parameters (422 Invalid, "sendInitialEvents is forbidden for watch unless the WatchList
feature gate is enabled"; one older than 1.27 refuses ``resourceVersionMatch`` on a watch), and
the informer lists instead, as client-go's reflector falls back.

Only ``kube_lister`` knows which library implements this.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, Protocol

from gpuplane.core.errors import GpuplaneError
from gpuplane.k8s.cluster.api_lister import RawObject

EventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]
EVENT_TYPES: tuple[EventType, ...] = ("ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR")
INITIAL_EVENTS_END = "k8s.io/initial-events-end"  # metav1.InitialEventsAnnotationKey


@dataclass(frozen=True, slots=True)
class WatchEvent:
    type: EventType
    object: RawObject

    @property
    def resource_version(self) -> str:
        meta = self.object.get("metadata")
        return str(meta.get("resourceVersion") or "") if isinstance(meta, dict) else ""

    @property
    def initial_events_end(self) -> bool:
        """The BOOKMARK that ends a watch-list's initial events."""
        if self.type != "BOOKMARK":
            return False
        meta = self.object.get("metadata")
        notes = meta.get("annotations") if isinstance(meta, dict) else None
        return isinstance(notes, dict) and notes.get(INITIAL_EVENTS_END) == "true"

    @property
    def expired(self) -> bool:
        """An ERROR whose Status says the resourceVersion is gone (410): list again."""
        return self.type == "ERROR" and self.object.get("code") == 410


@dataclass(frozen=True, slots=True)
class Listed:
    """Every object of a list path, and the list's own ``metadata.resourceVersion`` (of the
    last page: a paged list is one consistent read at the first page's version)."""

    items: tuple[RawObject, ...]
    resource_version: str


class ApiWatcher(Protocol):
    def list_versioned(self, path: str, *, limit: int) -> Listed:
        """As ``ApiLister.list``, with the list's resourceVersion (raises the same errors)."""
        ...

    def watch(self, path: str, resource_version: str, *, timeout_s: int) -> Iterator[WatchEvent]:
        """The events after ``resource_version`` until the server ends the stream (at
        ``timeout_s``). Raises WatchExpired when the server answers 410 outright, and
        ``UnavailableError`` when the connection fails or drops."""
        ...

    def watch_list(self, path: str, *, timeout_s: int) -> Iterator[WatchEvent]:
        """A watch-list of ``path`` (see the module docstring): the initial ADDED events, the
        initial-events-end BOOKMARK, then changes. Raises ``WatchListRefused`` when the server
        refuses its parameters, else as ``watch``."""
        ...


class WatchExpired(GpuplaneError):
    """The watch's resourceVersion is too old (HTTP 410, or an ERROR event with code 410)."""

    def __init__(self, path: str, detail: str = "") -> None:
        self.path = path
        super().__init__(f"watch of {path} expired" + (f": {detail}" if detail else ""))


class WatchListRefused(GpuplaneError):
    """The server does not serve watch-list (it refused ``sendInitialEvents``): list instead."""

    def __init__(self, path: str, detail: str = "") -> None:
        self.path = path
        super().__init__(f"watch-list of {path} refused" + (f": {detail}" if detail else ""))
