"""The watch side of the client seam: a list that says its resourceVersion, and a watch from it.

An API server watch (``GET PATH?watch=1&resourceVersion=RV``) streams one JSON object a line,
``{"type": ..., "object": ...}``, until ``timeoutSeconds`` or the connection ends:

- ``ADDED``/``MODIFIED``/``DELETED`` carry the whole object at its new resourceVersion;
- ``BOOKMARK`` (asked for with ``allowWatchBookmarks=true``) carries only
  ``metadata.resourceVersion``: nothing changed up to there, resume from it;
- ``ERROR`` carries a ``Status``; code 410 (reason ``Expired``/``Gone``) means RV is older than
  the server's watch cache keeps, and the client must list again (client-go's reflector does
  the same: ``isExpiredError`` -> relist).

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


@dataclass(frozen=True, slots=True)
class WatchEvent:
    type: EventType
    object: RawObject

    @property
    def resource_version(self) -> str:
        meta = self.object.get("metadata")
        return str(meta.get("resourceVersion") or "") if isinstance(meta, dict) else ""

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


class WatchExpired(GpuplaneError):
    """The watch's resourceVersion is too old (HTTP 410, or an ERROR event with code 410)."""

    def __init__(self, path: str, detail: str = "") -> None:
        self.path = path
        super().__init__(f"watch of {path} expired" + (f": {detail}" if detail else ""))
