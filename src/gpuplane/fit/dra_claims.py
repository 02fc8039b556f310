"""The workload's DRA claims, as the resourceclaim controller would make them.

A pod entry naming a ResourceClaimTemplate gets a claim made from it (``claim_from_template``,
the controller's name and owner), the template looked up in the workload first, then in the
cluster; one naming a ResourceClaim uses the cluster's claim. A template or claim that exists
nowhere is refused with the message the pod would wait with. The decision then allocates them
through the DynamicResources plugin like any other claim, and the answer names the devices.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from gpuplane.core.errors import InputError, Location
from gpuplane.scheduler.framework.decision import SchedulingDecision
from gpuplane.slicing.dra.claims import ResourceClaim, ResourceClaimTemplate
from gpuplane.slicing.dra.pod_claims import PodClaims, PodResourceClaim, claim_from_template
from gpuplane.slicing.dra.snapshot import DraSnapshot


def claims_for_pod(
    entries: Sequence[PodResourceClaim],
    *,
    namespace: str,
    pod_name: str,
    pod_uid: str,
    templates: Mapping[str, ResourceClaimTemplate],
    existing: Mapping[str, ResourceClaim],
    where: str,
) -> tuple[PodClaims, tuple[ResourceClaim, ...]]:
    made: list[ResourceClaim] = []
    statuses: dict[str, str | None] = {}
    for i, ref in enumerate(entries):
        field = f"spec.resourceClaims[{i}]"
        if ref.resource_claim_template_name is not None:
            key = f"{namespace}/{ref.resource_claim_template_name}"
            template = templates.get(key)
            if template is None:
                raise InputError(
                    f'resourceclaimtemplate.resource.k8s.io "{ref.resource_claim_template_name}"'
                    " not found",
                    expected="the template in the workload file or in the cluster",
                    location=Location(where, field=field),
                )
            claim = claim_from_template(
                template, pod_name=pod_name, pod_uid=pod_uid, pod_claim=ref.name
            )
            made.append(claim)
            statuses[ref.name] = claim.name
        elif ref.resource_claim_name is not None:
            key = f"{namespace}/{ref.resource_claim_name}"
            if key not in existing:
                raise InputError(
                    f'resourceclaim.resource.k8s.io "{ref.resource_claim_name}" not found',
                    expected="a ResourceClaim of the cluster",
                    location=Location(where, field=field),
                )
    return PodClaims(tuple(entries), statuses), tuple(made)


def with_claims(
    dra: DraSnapshot | None, claims: Sequence[ResourceClaim], pods: Mapping[str, PodClaims]
) -> DraSnapshot | None:
    if not claims and not pods:
        return dra
    base = dra or DraSnapshot()
    return replace(
        base, claims={**base.claims, **{c.key: c for c in claims}}, pods={**base.pods, **pods}
    )


def devices_by_pod(
    decision: SchedulingDecision, claims: Mapping[str, ResourceClaim]
) -> dict[str, tuple[str, ...]]:
    """pod uid -> "driver/pool/device" of every device its claims were allocated."""
    out: dict[str, list[str]] = {}
    for claim in decision.writes.claim_statuses:
        allocation = claim.status.allocation
        if allocation is None:
            continue
        names = [f"{r.driver}/{r.pool}/{r.device}" for r in allocation.devices.results]
        owners = {r.uid for r in claim.status.reserved_for}
        original = claims.get(claim.key)
        if original is not None and original.owner_pod_uid:
            owners.add(original.owner_pod_uid)
        for uid in owners:
            out.setdefault(uid, []).extend(names)
    return {k: tuple(v) for k, v in out.items()}
