"""Owner references (meta/v1 ``OwnerReference``): which controller object a pod or ReplicaSet
belongs to. gpuplane keeps the fields it acts on: the owner's kind, name and namespace (an owner
is always in its dependent's namespace; the API leaves the namespace out for that reason)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class OwnerRef:
    kind: str
    name: str
    namespace: str
