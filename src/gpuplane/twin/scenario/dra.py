"""The DRA objects a scenario declares: DeviceClasses, ResourceClaimTemplates, ResourceClaims.

ResourceSlices are not declared: the nodes of ``dra: true`` pools publish their own. The twin's
claim books and the resourceclaim controller are ``twin.dra.state``.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.slicing.dra.claims import DeviceClass, ResourceClaim, ResourceClaimTemplate


@dataclass(frozen=True, slots=True)
class DraObjectsSpec:
    """The DRA objects a scenario declares (ResourceSlices are the nodes' own)."""

    classes: tuple[DeviceClass, ...] = ()
    templates: tuple[ResourceClaimTemplate, ...] = ()
    claims: tuple[ResourceClaim, ...] = ()
