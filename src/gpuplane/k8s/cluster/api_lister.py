"""The one seam between gpuplane and a Kubernetes API client library.

Everything that reads a live cluster goes through ``ApiLister``; only ``kube_lister`` knows which
library implements it. The errors below are the seam's too, so callers never see the library's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from gpuplane.core.errors import GpuplaneError

RawObject = dict[str, Any]


class ApiLister(Protocol):
    """Read-only access to an API server: version, group discovery and paged lists."""

    def server_version(self) -> str | None:
        """``gitVersion`` from ``/version``, or None when the server does not say."""
        ...

    def group_versions(self, group: str) -> tuple[str, ...] | None:
        """The versions ``/apis/GROUP`` serves, or None when the server has no such group."""
        ...

    def list(self, path: str, *, limit: int) -> Iterator[RawObject]:
        """Every object of a list path, fetched in pages of ``limit`` (``continue`` tokens).

        Raises ListForbidden on 403 and ListNotFound on 404.
        """
        ...


class ListForbidden(GpuplaneError):
    """The server refused to list a resource (RBAC)."""

    def __init__(self, path: str, detail: str = "") -> None:
        self.path = path
        self.detail = detail
        super().__init__(f"forbidden: {path}" + (f" ({detail})" if detail else ""))


class ListNotFound(GpuplaneError):
    """The server has no such resource (a CRD that is not installed)."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(f"not found: {path}")
