"""What plugins ask to be written when a pod binds, kept apart until the decision returns.

kube-scheduler's plugins write through the Handle: PreBind updates a ResourceClaim's status
(allocation and ``reservedFor``) with the ClientSet, and Reserve signals an allocation in flight
to the shared DRA manager. A gpuplane decision writes nothing: a plugin records those writes in
the decision's ``WriteSink`` (the Handle's ``writes``), later pods of the same decision read them
back, and the framework drops a pod's writes whenever its binding does not happen (Unreserve,
after a failed Reserve, Permit, PreBind or Bind, or a rejected wait). What is left travels in the
decision as ``DecisionWrites``, for the caller to apply with the bindings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpuplane.slicing.dra.claims import ResourceClaim
from gpuplane.slicing.dra.snapshot import DraSnapshot, PendingAllocation


@dataclass(frozen=True, slots=True)
class DecisionWrites:
    """A decision's writes. ``claim_statuses``: ResourceClaims whose status a bound pod's PreBind
    changed, last version of each, in the order first written. ``pending_allocations``: every
    allocation in flight after the decision, by claim key (the previous ones it carried over,
    less those written or dropped, plus those reserved for pods now waiting at Permit); they
    replace the cluster's. None when the snapshot had no DRA section (nothing to replace)."""

    claim_statuses: tuple[ResourceClaim, ...] = ()
    pending_allocations: Mapping[str, PendingAllocation] | None = None


class WriteSink:
    """The writes of one decision, kept per pod so that a pod's can be taken back (owner of
    them). Reads see the snapshot with the writes so far applied, as kube-scheduler's assume
    cache shows its own API writes before the informer does."""

    def __init__(self, dra: DraSnapshot | None = None) -> None:
        self.dra = dra
        base = dict(dra.claims) if dra is not None else {}
        self._base: Mapping[str, ResourceClaim] = base
        self._view: dict[str, ResourceClaim] = dict(base)
        self._written: dict[str, ResourceClaim] = {}
        self._pending: dict[str, PendingAllocation] = dict(dra.pending) if dra is not None else {}
        # pod uid -> claim key -> that claim's write before the pod's (None: not written yet).
        self._before: dict[str, dict[str, ResourceClaim | None]] = {}

    # ----- reads (later pods of the decision see earlier writes) -----
    @property
    def claims(self) -> Mapping[str, ResourceClaim]:
        """Every claim of the snapshot, as written so far, by key."""
        return self._view

    @property
    def written(self) -> Mapping[str, ResourceClaim]:
        """The claims written so far, by key."""
        return self._written

    @property
    def pending(self) -> Mapping[str, PendingAllocation]:
        """Allocations in flight, by claim key."""
        return self._pending

    # ----- writes -----
    def write_claim(self, pod_uid: str, claim: ResourceClaim) -> None:
        """PreBind: ``claim`` with its new status, written when ``pod_uid`` binds."""
        self._before.setdefault(pod_uid, {}).setdefault(claim.key, self._written.get(claim.key))
        self._written[claim.key] = self._view[claim.key] = claim

    def hold(self, key: str, pending: PendingAllocation) -> None:
        """Reserve: the allocation of claim ``key`` is in flight for ``pending.pod_uid``."""
        self._pending[key] = pending

    def settle(self, key: str) -> None:
        """The in-flight allocation of claim ``key`` was written to the claim."""
        self._pending.pop(key, None)

    def drop(self, pod_uid: str) -> None:
        """The pod does not bind: its claim writes are undone, its allocations in flight go."""
        for key, before in self._before.pop(pod_uid, {}).items():
            if before is None:
                del self._written[key]
                original = self._base.get(key)
                if original is None:
                    self._view.pop(key, None)
                else:
                    self._view[key] = original
            else:
                self._written[key] = self._view[key] = before
        for key, pending in list(self._pending.items()):
            if pending.pod_uid == pod_uid:
                del self._pending[key]

    def build(self) -> DecisionWrites:
        return DecisionWrites(
            claim_statuses=tuple(self._written.values()),
            pending_allocations=dict(self._pending) if self.dra is not None else None,
        )
