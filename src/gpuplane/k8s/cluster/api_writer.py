"""The few writes gpuplane's live controllers make, as a seam beside ``ApiLister``.

Only ``kube_writer`` knows which client library sends them. Bodies are the JSON the API server
receives, built by the callers, so tests can assert them exactly:

- a node's labels: a JSON merge patch of ``metadata.labels`` (what ``kubectl label`` sends);
- a ConfigMap: created, or replaced when it exists (409 on create);
- an Event (core/v1);
- a pod's Eviction (policy/v1): the API server refuses it (429) when a PodDisruptionBudget does
  not allow it;
- a pod's Binding (core/v1, the scheduler extender's ``--bind``): what kube-scheduler's
  DefaultBinder posts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from gpuplane.core.errors import GpuplaneError
from gpuplane.k8s.cluster.api_lister import RawObject


class ApiWriter(Protocol):
    def patch_node_labels(self, node: str, labels: Mapping[str, str | None]) -> None:
        """Set (or, for None, remove) labels on a node."""
        ...

    def upsert_config_map(self, namespace: str, name: str, body: RawObject) -> str:
        """Create the ConfigMap, or replace it when it exists; "created" or "replaced"."""
        ...

    def create_event(self, namespace: str, body: RawObject) -> None: ...

    def evict_pod(self, namespace: str, name: str) -> bool:
        """Ask for an eviction; False when a PodDisruptionBudget refuses it (429)."""
        ...

    def bind_pod(self, namespace: str, name: str, uid: str, node: str) -> None:
        """POST the pod's ``binding`` subresource (``WriteFailed`` when refused)."""
        ...


class WriteFailed(GpuplaneError):
    """The server refused a write (RBAC, validation, conflict)."""

    def __init__(self, method: str, path: str, status: int, detail: str = "") -> None:
        self.status, self.detail = status, detail
        super().__init__(f"{method} {path} answered {status}" + (f": {detail}" if detail else ""))
