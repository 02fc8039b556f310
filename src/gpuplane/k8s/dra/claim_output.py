"""The ResourceClaims of a ``dra allocate`` answer as the API server would hold them after the
scheduler's DynamicResources plugin binds them: each object as written, with
``status.allocation`` set to the allocation the allocator chose (``resource.k8s.io/v1``
``AllocationResult``: ``devices.results``, ``devices.config``, ``nodeSelector``). Claims that
were already allocated are left out: the command allocates the others.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from gpuplane.k8s.dra.documents import LocatedDraObject
from gpuplane.slicing.dra.claims import ResourceClaim


def allocated_claim_objects(
    objects: Sequence[LocatedDraObject], answer: dict[str, Any]
) -> list[dict[str, Any]]:
    """The claim objects of ``objects`` that ``answer`` (check_allocation's) allocated, in the
    order of the answer, each with ``status.allocation`` filled in."""
    by_key = {
        (o.value.namespace, o.value.name): o
        for o in objects
        if isinstance(o.value, ResourceClaim) and isinstance(o.manifest, dict)
    }
    out: list[dict[str, Any]] = []
    for claim in answer.get("claims", []):
        located = by_key[(claim["namespace"], claim["name"])]
        manifest = copy.deepcopy(located.manifest)
        metadata = manifest.setdefault("metadata", {})
        metadata.setdefault("namespace", claim["namespace"])
        status = manifest.get("status") or {}
        manifest["status"] = {**status, "allocation": claim["allocation"]}
        out.append(manifest)
    return out
