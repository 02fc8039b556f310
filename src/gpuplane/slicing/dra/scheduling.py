"""The DynamicResources plugin's checks that do not depend on the scheduler framework: which
claims a pod uses (PreFilter's ``podResourceClaims``), whether each can be used or must wait,
and the prioritized-list score.

Messages are the plugin's (kubernetes ``pkg/scheduler/framework/plugins/dynamicresources``):
``resourceclaim.resource.k8s.io "<name>" not found``, ``resourceclaim "<name>" is being
deleted``, ``ResourceClaim <ns>/<name> was not created for pod <ns>/<pod> (pod is not owner)``,
``resourceclaim in use`` (``reservedFor`` is full), ``resource claim <ns>/<name> is in the
process of being allocated``, ``request <r>: device class <c> does not exist``. Each of these
makes the pod unschedulable everywhere; a request naming no class at all is the plugin's one
PreFilter *error* here (``request <r>: unsupported request type``: the attempt fails).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpuplane.slicing.dra import limits
from gpuplane.slicing.dra.allocation import AllocationResult
from gpuplane.slicing.dra.claims import DeviceClass, DeviceRequest, ResourceClaim
from gpuplane.slicing.dra.outcome import Features
from gpuplane.slicing.dra.pod_claims import ClaimNotFound, PodClaims, claim_names


def pod_resource_claims(
    namespace: str,
    pod_name: str,
    pod_uid: str,
    pod_claims: PodClaims,
    claims: Mapping[str, ResourceClaim],
) -> list[ResourceClaim]:
    """The pod's claims in ``spec.resourceClaims`` order; ClaimNotFound when one is unusable."""
    out = []
    for named in claim_names(namespace, pod_name, pod_claims):
        claim = claims.get(f"{namespace}/{named.claim_name}")
        if claim is None:
            raise ClaimNotFound(f'resourceclaim.resource.k8s.io "{named.claim_name}" not found')
        if claim.deleting:
            raise ClaimNotFound(f'resourceclaim "{claim.name}" is being deleted')
        if named.must_check_owner and claim.owner_pod_uid != pod_uid:
            raise ClaimNotFound(
                f"ResourceClaim {claim.namespace}/{claim.name} was not created for pod "
                f"{namespace}/{pod_name} (pod is not owner)"
            )
        out.append(claim)
    return out


@dataclass(frozen=True, slots=True)
class ClaimProblem:
    """Why PreFilter stops the pod: a rejection (unschedulable on every node, kube's
    UnschedulableAndUnresolvable) or, with ``error``, an Error status (the attempt fails)."""

    message: str
    error: bool = False


def claim_problem(
    claim: ResourceClaim,
    pod_uid: str,
    pending: bool,
    classes: Mapping[str, DeviceClass],
    features: Features,
) -> ClaimProblem | None:
    """Why the pod cannot use ``claim`` on any node now, or None (PreFilter's loop body)."""
    allocation = claim.status.allocation
    if allocation is not None:
        if not claim.can_be_reserved() and not claim.is_reserved_for(pod_uid):
            return ClaimProblem("resourceclaim in use")
        return None
    if pending:
        return ClaimProblem(f"resource claim {claim.key} is in the process of being allocated")
    for request in claim.spec.devices.requests:
        problem = _request_problem(claim, request, classes, features)
        if problem:
            return problem
    return None


def _request_problem(
    claim: ResourceClaim,
    request: DeviceRequest,
    classes: Mapping[str, DeviceClass],
    features: Features,
) -> ClaimProblem | None:
    if request.exactly is not None:
        return _class_problem(request.exactly.device_class_name, request.name, classes)
    if not request.first_available:
        return ClaimProblem(
            f"resource claim {claim.key}, request {request.name}: unknown request type"
        )
    if not features.prioritized_list:
        return ClaimProblem(
            f"resource claim {claim.key}, request {request.name}: has subrequests, but the "
            "DRAPrioritizedList feature is disabled"
        )
    for sub in request.first_available:
        problem = _class_problem(sub.device_class_name, f"{request.name}/{sub.name}", classes)
        if problem:
            return problem
    return None


def _class_problem(
    name: str, request: str, classes: Mapping[str, DeviceClass]
) -> ClaimProblem | None:
    if not name:
        # validateDeviceClass answers statusError here, not a rejection.
        return ClaimProblem(f"request {request}: unsupported request type", error=True)
    if name not in classes:
        return ClaimProblem(f"request {request}: device class {name} does not exist")
    return None


def prioritized_list_score(
    claims: Sequence[ResourceClaim], allocations: Sequence[AllocationResult]
) -> int:
    """Score: per ``firstAvailable`` request, 8 minus the index of the subrequest chosen (a node
    where the preferred subrequest fits scores higher)."""
    score = 0
    for claim, allocation in zip(claims, allocations, strict=True):
        chosen = {r.request for r in allocation.devices.results if "/" in r.request}
        for request in claim.spec.devices.requests:
            for i, sub in enumerate(request.first_available):
                if f"{request.name}/{sub.name}" in chosen:
                    score += limits.FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE - i
    return score
