"""The pod of an extender request -> the scheduler's ``PodInfo`` and its declared GPU needs.

Read by ``fit``'s pod reader (requests as kube-scheduler computes them, priority from the
cluster's PriorityClasses); the needs come from the annotations of
:mod:`gpuplane.fit.extender.needs`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from gpuplane.core.errors import InputError
from gpuplane.fit.extender.needs import MIN_RING_ANNOTATION, NVLINK_ISLAND_ANNOTATION, GpuNeeds
from gpuplane.k8s.cluster.raw_pod import fit_pod
from gpuplane.live.extender.wire import WireError
from gpuplane.scheduler.framework.types import PodInfo

SOURCE = "the extender request"


def needs_of(annotations: Mapping[str, Any]) -> GpuNeeds:
    island = str(annotations.get(NVLINK_ISLAND_ANNOTATION, "false")).strip().lower()
    if island not in ("true", "false"):
        raise WireError(f"annotation {NVLINK_ISLAND_ANNOTATION}={island!r}: expected true/false")
    ring_text = annotations.get(MIN_RING_ANNOTATION)
    ring: float | None = None
    if ring_text is not None:
        try:
            ring = float(str(ring_text))
        except ValueError:
            ring = math.nan
        if not math.isfinite(ring) or ring < 0:
            raise WireError(
                f"annotation {MIN_RING_ANNOTATION}={ring_text!r}: expected GB/s, a number >= 0"
            )
    return GpuNeeds(nvlink_island=island == "true", min_ring_gbps=ring)


def request_pod(
    raw: Mapping[str, Any], classes: Mapping[str, int], default_priority: int
) -> tuple[PodInfo, GpuNeeds]:
    meta = raw.get("metadata")
    if not isinstance(meta, dict) or not meta.get("name"):
        raise WireError("the pod has no metadata.name")
    try:
        pod = fit_pod(dict(raw), 0, SOURCE, classes, default_priority)
    except InputError as exc:
        raise WireError(f"the pod cannot be read: {exc}") from None
    annotations = meta.get("annotations")
    return pod.info, needs_of(annotations if isinstance(annotations, dict) else {})
