"""A raw pod's effective request for one resource, as the scheduler counts it.

``AggregateContainerRequests`` (k8s.io/component-helpers/resource): the sum over the app
containers plus restartable init containers (sidecars), or the largest of the init containers
(each one counted with the sidecars started before it), whichever is larger. For an extended
resource such as ``nvidia.com/gpu`` a limit alone implies the same request.
"""

from __future__ import annotations

from typing import Any

from gpuplane.core.errors import InputError, Location
from gpuplane.k8s.cluster.api_lister import RawObject
from gpuplane.k8s.manifests.quantity import parse_manifest_quantity


def _container_request(container: Any, resource: str, field: str) -> int:
    if not isinstance(container, dict):
        return 0
    resources = container.get("resources") or {}
    if not isinstance(resources, dict):
        return 0
    for part in ("requests", "limits"):
        values = resources.get(part) or {}
        if isinstance(values, dict) and resource in values:
            try:
                return parse_manifest_quantity(values[resource]).value()
            except (InputError, ValueError) as exc:
                where = Location(field=f"{field}.resources.{part}.{resource}")
                raise InputError(f"invalid quantity: {exc}", location=where) from exc
    return 0


def _containers(spec: dict[str, Any], key: str) -> list[Any]:
    value = spec.get(key) or []
    return value if isinstance(value, list) else []


def pod_request(pod: RawObject, resource: str) -> int:
    """The pod's request for ``resource`` in whole units (``Quantity.Value``, rounded up)."""
    spec = pod.get("spec") or {}
    if not isinstance(spec, dict):
        return 0
    total = sum(
        _container_request(c, resource, f"spec.containers[{i}]")
        for i, c in enumerate(_containers(spec, "containers"))
    )
    sidecars = 0
    init_max = 0
    for i, c in enumerate(_containers(spec, "initContainers")):
        amount = _container_request(c, resource, f"spec.initContainers[{i}]")
        if isinstance(c, dict) and c.get("restartPolicy") == "Always":
            sidecars += amount
            init_max = max(init_max, sidecars)
        else:
            init_max = max(init_max, sidecars + amount)
    return max(total + sidecars, init_max)
