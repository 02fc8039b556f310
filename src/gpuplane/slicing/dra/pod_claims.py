"""A pod's claims: ``spec.resourceClaims`` entries and how they name a ResourceClaim
(k8s.io/dynamic-resource-allocation ``resourceclaim.Name``), and the claim the resourceclaim
controller makes from a ResourceClaimTemplate.

An entry names either a claim (``resourceClaimName``: shared, used as is) or a template
(``resourceClaimTemplateName``): then the controller creates a claim owned by the pod and
records its name in ``status.resourceClaimStatuses``; until it has, the pod cannot be scheduled
(``ResourceClaim not created yet``), and a claim found under that name must be owned by the pod.
A status entry without a name means the claim was deliberately not created and is skipped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from gpuplane.slicing.dra.claims import ResourceClaim, ResourceClaimTemplate

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
# The API server's generateName alphabet (apimachinery util/rand: no vowels, no 0/1/3).
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_MAX_BASE = 57  # 63 minus "-" and the 5 generated characters


@dataclass(frozen=True, slots=True)
class PodResourceClaim:
    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


@dataclass(frozen=True, slots=True)
class PodClaims:
    """What DRA reads of one pod: its claim entries and the names the controller recorded."""

    resource_claims: tuple[PodResourceClaim, ...] = ()
    # status.resourceClaimStatuses: pod claim name -> ResourceClaim name (None: not created).
    claim_statuses: Mapping[str, str | None] = field(default_factory=dict)


class ClaimNotFound(Exception):
    """A claim the pod needs is missing or unusable (the message is the scheduler's)."""


@dataclass(frozen=True, slots=True)
class NamedClaim:
    pod_claim: str
    claim_name: str
    must_check_owner: bool


def claim_names(namespace: str, pod_name: str, claims: PodClaims) -> list[NamedClaim]:
    """resourceclaim.Name for every entry (skipping deliberately uncreated claims)."""
    out: list[NamedClaim] = []
    for ref in claims.resource_claims:
        if ref.resource_claim_name is not None:
            out.append(NamedClaim(ref.name, ref.resource_claim_name, False))
        elif ref.resource_claim_template_name is not None:
            if ref.name not in claims.claim_statuses:
                raise ClaimNotFound(f'pod "{namespace}/{pod_name}": ResourceClaim not created yet')
            generated = claims.claim_statuses[ref.name]
            if generated is not None:
                out.append(NamedClaim(ref.name, generated, True))
        else:
            raise ClaimNotFound(
                f'pod "{namespace}/{pod_name}", spec.resourceClaim "{ref.name}": none of the '
                "supported fields are set"
            )
    return out


def generated_claim_name(pod_name: str, pod_claim: str, seed: str) -> str:
    """The controller's ``generateName`` (pod and claim names cut in proportion beyond 57
    characters) plus 5 characters, here drawn from a hash of ``seed`` instead of at random."""
    base = f"{pod_name}-{pod_claim}"
    if len(base) > _MAX_BASE:
        cut_pod = len(pod_name) * _MAX_BASE // len(base)
        cut_claim = len(pod_claim) * _MAX_BASE // len(base)
        base = f"{pod_name[:cut_pod]}-{pod_claim[:cut_claim]}"
    digest = hashlib.sha256(seed.encode("utf-8")).digest()
    suffix = "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:5])
    return f"{base}-{suffix}"


def claim_from_template(
    template: ResourceClaimTemplate, *, pod_name: str, pod_uid: str, pod_claim: str
) -> ResourceClaim:
    """The claim the resourceclaim controller creates for one pod entry (owned by the pod)."""
    name = generated_claim_name(pod_name, pod_claim, f"{pod_uid}/{pod_claim}")
    uid = hashlib.sha256(f"claim/{template.namespace}/{name}".encode()).hexdigest()
    return ResourceClaim(
        name=name,
        namespace=template.namespace,
        uid=f"{uid[:8]}-{uid[8:12]}-{uid[12:16]}-{uid[16:20]}-{uid[20:32]}",
        spec=template.spec,
        owner_pod_uid=pod_uid,
    )
