"""The seam through which the bind verb creates a pod's Binding in the API server."""

from __future__ import annotations

from typing import Protocol


class Binder(Protocol):
    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        """POST the pod's ``binding`` subresource; raise ``BindError`` with the server's
        words when it refuses."""


class BindError(Exception):
    pass
