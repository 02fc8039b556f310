"""What ``gpuplane dra allocate`` answers: the scheduler's DRA decision for one pod's claims on
one node, from the objects of a file, written the way Kubernetes writes it.

The claims that already carry ``status.allocation`` hold their devices (except results with
``adminAccess``, which never make a device unavailable); every other claim belongs to the pod
being scheduled and is allocated together with the others, in the given order, on ``node``, as
the DynamicResources plugin does in Filter. Before that, its PreFilter refuses a claim that is
being deleted or whose request names a device class that does not exist (the pod is then
unschedulable everywhere, with the plugin's message: kube-scheduler never lets the allocator
reach its own "could not retrieve device class" error).

The answer is one of:

- ``{"claims": [{"name", "namespace", "allocation"}]}``: one entry per claim allocated here, its
  ``allocation`` exactly as the scheduler writes ``status.allocation`` (camelCase, fields the API
  omits when empty left out, ``nodeSelector`` pinning node-local devices with a
  ``metadata.name`` field selector). ``allocationTimestamp`` is left out: the API sets it only
  with the alpha binding-conditions gates, and a pure decision has no clock.
- ``{"unsatisfiable": true, "reason", "detail"}``: no allocation exists and the pod is
  Unschedulable; ``reason`` is the plugin's status message (``cannot allocate all claims``,
  ``invalid resource pools were encountered``, a PreFilter message), ``detail`` gpuplane's
  explanation (which claim cannot fit even alone, or that the node sees no devices at all).
- ``{"error": message}``: the plugin answered Error, which fails the whole scheduling attempt (a
  CEL runtime error such as a missing attribute, too many devices, an ``All`` request meeting an
  incomplete or invalid pool, a request naming no class), with the allocator's (or PreFilter's)
  message; kube-scheduler reports it as ``running "DynamicResources" filter plugin: <message>``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from gpuplane.slicing.dra.allocation import (
    AllocationResult,
    DeviceAllocationConfiguration,
    DeviceRequestAllocationResult,
)
from gpuplane.slicing.dra.allocator import allocate
from gpuplane.slicing.dra.claims import DeviceClass, ResourceClaim
from gpuplane.slicing.dra.devices import DeviceID, DeviceToleration, ResourceSlice
from gpuplane.slicing.dra.node_selector import DraNode
from gpuplane.slicing.dra.outcome import Features, OutcomeKind
from gpuplane.slicing.dra.pools import device_targets, gather_pools
from gpuplane.slicing.dra.scheduling import claim_problem
from gpuplane.slicing.dra.snapshot import allocated_in

# The plugin's Filter message when the allocator finds no solution (dynamicresources.go).
CANNOT_ALLOCATE = "cannot allocate all claims"


# ----- status.allocation as the API writes it -----
def toleration_to_api(toleration: DeviceToleration) -> dict[str, object]:
    """DeviceToleration: ``operator`` is always present (the API defaults it to Equal), the other
    fields are omitted when empty."""
    out: dict[str, object] = {"operator": toleration.operator or "Equal"}
    for key, value in (
        ("key", toleration.key),
        ("value", toleration.value),
        ("effect", toleration.effect),
    ):
        if value:
            out[key] = value
    return out


def result_to_api(result: DeviceRequestAllocationResult) -> dict[str, object]:
    out: dict[str, object] = {
        "request": result.request,
        "driver": result.driver,
        "pool": result.pool,
        "device": result.device,
    }
    if result.admin_access is not None:
        out["adminAccess"] = result.admin_access
    if result.tolerations:
        out["tolerations"] = [toleration_to_api(t) for t in result.tolerations]
    return out


def config_to_api(config: DeviceAllocationConfiguration) -> dict[str, object]:
    out: dict[str, object] = {"source": config.source}
    if config.requests:
        out["requests"] = list(config.requests)
    if config.opaque is not None:
        out["opaque"] = {
            "driver": config.opaque.driver,
            "parameters": _plain(config.opaque.parameters),
        }
    return out


def allocation_to_api(allocation: AllocationResult) -> dict[str, object]:
    """``status.allocation``: ``devices`` always (a Go struct is never omitted), its ``results``
    and ``config`` and the ``nodeSelector`` only when set."""
    devices: dict[str, object] = {}
    if allocation.devices.results:
        devices["results"] = [result_to_api(r) for r in allocation.devices.results]
    if allocation.devices.config:
        devices["config"] = [config_to_api(c) for c in allocation.devices.config]
    out: dict[str, object] = {"devices": devices}
    if allocation.node_selector is not None:
        out["nodeSelector"] = allocation.node_selector.to_dict()
    return out


def _plain(value: object) -> Any:
    """Opaque parameters as plain JSON values (copies, so callers cannot alter the claim)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


# ----- the decision -----
def check_allocation(
    slices: Sequence[ResourceSlice],
    classes: Sequence[DeviceClass],
    claims: Sequence[ResourceClaim],
    node: DraNode,
    *,
    features: Features | None = None,
) -> dict[str, object]:
    """Allocate the unallocated ``claims`` together on ``node``; see the module doc."""
    features = features or Features()
    class_map = {c.name: c for c in classes}
    if len(class_map) != len(classes):
        raise ValueError("a device class is given twice")
    held = allocated_in(c.status.allocation for c in claims if c.status.allocation is not None)
    pending = [c for c in claims if c.status.allocation is None]
    problem = _prefilter(pending, class_map, features)
    if problem is not None:
        return problem
    outcome = allocate(pending, slices, class_map, held, node, features=features)
    if outcome.kind is OutcomeKind.ERROR:
        return {"error": outcome.message}
    if outcome.kind is OutcomeKind.ALLOCATED:
        return {
            "claims": [
                {"name": c.name, "namespace": c.namespace, "allocation": allocation_to_api(a)}
                for c, a in zip(pending, outcome.results, strict=True)
            ]
        }
    reason = CANNOT_ALLOCATE if outcome.kind is OutcomeKind.NO_SOLUTION else outcome.message
    detail = _explain(pending, slices, class_map, held, node, features)
    return {"unsatisfiable": True, "reason": reason, "detail": detail}


def _prefilter(
    pending: Sequence[ResourceClaim], classes: Mapping[str, DeviceClass], features: Features
) -> dict[str, object] | None:
    """PreFilter's checks of the pod's claims, in its order: all claims are looked up (a claim
    being deleted stops there), then each claim's requests are checked against the classes."""
    for claim in pending:
        if claim.deleting:
            return _unsatisfiable(
                f'resourceclaim "{claim.name}" is being deleted', f"claim {claim.key}"
            )
    for claim in pending:
        problem = claim_problem(claim, "", False, classes, features)
        if problem is not None and problem.error:
            return {"error": problem.message}
        if problem is not None:
            return _unsatisfiable(problem.message, f"claim {claim.key}")
    return None


def _unsatisfiable(reason: str, detail: str) -> dict[str, object]:
    return {"unsatisfiable": True, "reason": reason, "detail": detail}


def _explain(
    pending: Sequence[ResourceClaim],
    slices: Sequence[ResourceSlice],
    classes: Mapping[str, DeviceClass],
    held: AbstractSet[DeviceID],
    node: DraNode,
    features: Features,
) -> str:
    """Why nothing fits, in words: no devices for this node at all, or the claims that cannot
    be allocated even on their own, or that only their combination fails."""
    visible, notes = _visible_devices(slices, node)
    if not visible:
        return "; ".join([f"node {node.name} sees no devices", *notes])
    free = len(visible - held)
    where = (
        f"node {node.name} sees {len(visible)} device(s), {len(visible) - free} held by "
        "allocated claims"
    )
    alone = [
        claim.key
        for claim in pending
        if allocate([claim], slices, classes, held, node, features=features).kind
        is not OutcomeKind.ALLOCATED
    ]
    if alone:
        names = ", ".join(alone)
        return "; ".join([f"{where}; cannot be allocated even on its own: {names}", *notes])
    if len(pending) > 1:
        return "; ".join([f"{where}; each claim fits on its own, but not all together", *notes])
    return "; ".join([where, *notes])


def _visible_devices(
    slices: Sequence[ResourceSlice], node: DraNode
) -> tuple[set[DeviceID], list[str]]:
    """The devices of the usable pools ``node`` sees, and notes on pools it cannot use and
    slices meant for other nodes."""
    visible: set[DeviceID] = set()
    notes: list[str] = []
    for pool in gather_pools(slices, node):
        if pool.incomplete:
            notes.append(f"pool {pool.pool_id} is incomplete (not all its ResourceSlices are here)")
            continue
        if pool.invalid:
            notes.append(f"pool {pool.pool_id} is invalid: {pool.invalid_reason}")
            continue
        for rslice in pool.slices:
            per_device = rslice.spec.per_device_node_selection
            for device in rslice.spec.devices:
                if not per_device or device_targets(device, node):
                    visible.add(rslice.device_id(device))
    if not visible:
        others = sorted({s.spec.node_name for s in slices if s.spec.node_name} - {node.name})
        if others:
            notes.append(f"the ResourceSlices with a nodeName are for {', '.join(others)}")
        if any(s.spec.node_selector is not None for s in slices):
            notes.append("no ResourceSlice nodeSelector matches the node's labels")
    return visible, notes
