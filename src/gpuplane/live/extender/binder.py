"""The seam through which the bind verb creates a pod's Binding in the API server.

``WriterBinder`` is the live one (``serve extender --kubeconfig ... --bind``): it posts the
Binding through ``ApiWriter.bind_pod``, as kube-scheduler's DefaultBinder would, and turns the
server's refusal into ``BindError`` with the server's own message, which the bind verb answers
as ``{"Error": message}`` (kube-scheduler then unreserves the pod and requeues it).
"""

from __future__ import annotations

from typing import Protocol

from gpuplane.core.errors import UnavailableError
from gpuplane.k8s.cluster.api_writer import WriteFailed


class Binder(Protocol):
    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        """POST the pod's ``binding`` subresource; raise ``BindError`` with the server's
        words when it refuses."""


class BindError(Exception):
    pass


class PodBinder(Protocol):
    """The one write the binder needs (``ApiWriter`` has it)."""

    def bind_pod(self, namespace: str, name: str, uid: str, node: str) -> None: ...


class WriterBinder:
    def __init__(self, writer: PodBinder) -> None:
        self.writer = writer

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        try:
            self.writer.bind_pod(namespace, name, uid, node)
        except WriteFailed as exc:
            raise BindError(exc.detail or str(exc)) from exc
        except UnavailableError as exc:
            raise BindError(str(exc)) from exc
