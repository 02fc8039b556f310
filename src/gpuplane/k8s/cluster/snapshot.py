"""``ClusterSnapshot``: the raw objects of a cluster by kind, plus where and when they came from.

The file form (docs/snapshot.md) is ``apiVersion: gpuplane.io/v1alpha1``, ``kind:
ClusterSnapshot``, a ``metadata`` block and ``objects`` keyed by the catalogue's keys. Objects
are kept exactly as the API server (or the dump) gave them, so later readers decide what they
mean; the snapshot itself interprets nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpuplane.k8s.cluster.api_lister import RawObject
from gpuplane.k8s.cluster.catalogue import SNAPSHOT_KEYS

API_VERSION = "gpuplane.io/v1alpha1"
KIND = "ClusterSnapshot"


@dataclass(frozen=True, slots=True)
class Skipped:
    """A resource that is not in the snapshot, and why (absent CRD, older server, unused kind)."""

    resource: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"resource": self.resource, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class ClusterSnapshot:
    source: str  # "kubeconfig PATH (context C, server URL)" or the files read
    read_at: str  # RFC 3339 UTC; the reader's wall clock, never used by decisions
    server_version: str | None
    api_versions: Mapping[str, str]  # snapshot key -> "group/version" read
    skipped: tuple[Skipped, ...]
    objects: Mapping[str, tuple[RawObject, ...]] = field(default_factory=dict)
    # The snapshot file this was read from, if any: where a mistake in an object is, which
    # ``source`` (the cluster or dumps the file was made from) is not. Not written back, and
    # not part of equality: the same snapshot read from two files is the same snapshot.
    read_from: str | None = field(default=None, compare=False)

    @property
    def where(self) -> str:
        """What error messages name: the snapshot file read, else the source."""
        return self.read_from or self.source

    def of(self, key: str) -> tuple[RawObject, ...]:
        return self.objects.get(key, ())

    def as_dict(self) -> dict[str, Any]:
        return {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "metadata": {
                "source": self.source,
                "readAt": self.read_at,
                "serverVersion": self.server_version,
                "apiVersions": dict(self.api_versions),
                "skipped": [s.as_dict() for s in self.skipped],
            },
            "objects": {key: list(self.of(key)) for key in SNAPSHOT_KEYS},
        }
