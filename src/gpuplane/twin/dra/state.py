"""DRA in the twin: the cluster's ResourceSlices, DeviceClasses and ResourceClaims, the
resourceclaim controller, and what the scheduler's DynamicResources plugin wrote.

- Nodes of pools with ``dra: true`` run NVIDIA's DRA driver (``gpu.nvidia.com``): their GPUs
  are published as ResourceSlices (``gpuplane.slicing.dra.node_slices``), not advertised by the
  device plugin. Slices are published once the node's GPU stack is ready and withdrawn while it
  is not (the kubelet plugin runs on the node).
- The resourceclaim controller creates a pod's claims from its ResourceClaimTemplates as soon as
  the pod exists (owned by the pod, name recorded in ``status.resourceClaimStatuses``); when the
  pod ends it takes the pod out of ``reservedFor``, deletes the claims the pod owns, and
  deallocates a shared claim nobody reserves any more.
- After each scheduling decision the twin applies the claim writes the decision carries
  (allocation and ``reservedFor``, recorded by PreBind) and keeps its in-flight allocations for
  the next snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from gpuplane.slicing.dra.claims import (
    DeviceClass,
    ResourceClaim,
    ResourceClaimStatus,
    ResourceClaimTemplate,
)
from gpuplane.slicing.dra.devices import ResourceSlice
from gpuplane.slicing.dra.node_slices import node_resource_slices
from gpuplane.slicing.dra.pod_claims import PodClaims, claim_from_template
from gpuplane.slicing.dra.snapshot import DraSnapshot, PendingAllocation
from gpuplane.twin.cluster.objects import Node, Pod
from gpuplane.twin.component import Component
from gpuplane.twin.scenario.dra import DraObjectsSpec

_GPU_OF = re.compile(r"^gpu-(\d+)")


@dataclass(slots=True)
class DraState(Component):
    classes: dict[str, DeviceClass] = field(default_factory=dict)
    templates: dict[str, ResourceClaimTemplate] = field(default_factory=dict)
    claims: dict[str, ResourceClaim] = field(default_factory=dict)
    statuses: dict[str, dict[str, str | None]] = field(default_factory=dict)  # pod uid
    pending: dict[str, PendingAllocation] = field(default_factory=dict)
    _slices: dict[str, tuple[ResourceSlice, ...]] = field(default_factory=dict)

    @classmethod
    def from_spec(cls, spec: DraObjectsSpec) -> DraState:
        return cls(
            classes={c.name: c for c in spec.classes},
            templates={t.key: t for t in spec.templates},
            claims={c.key: c for c in spec.claims},
        )

    # ----- nodes -----
    def slices_of(self, node: Node) -> tuple[ResourceSlice, ...]:
        if node.name not in self._slices:
            self._slices[node.name] = node_resource_slices(node.topology, node_name=node.name)
        return self._slices[node.name]

    def published(self, nodes: list[Node]) -> tuple[ResourceSlice, ...]:
        return tuple(
            s
            for n in nodes
            if n.dra and n.ready and not n.lost and n.gpus_advertised
            for s in self.slices_of(n)
        )

    # ----- the resourceclaim controller -----
    def on_pod(self, pod: Pod) -> None:
        entries = pod.template.resource_claims
        if not entries:
            return
        if pod.is_active and pod.uid not in self.statuses:
            made: dict[str, str | None] = {}
            for ref in entries:
                if ref.resource_claim_template_name is None:
                    continue
                template = self.templates.get(f"{pod.namespace}/{ref.resource_claim_template_name}")
                if template is None:
                    continue  # the pod waits: "ResourceClaimTemplate ... not found"
                claim = claim_from_template(
                    template, pod_name=pod.name, pod_uid=pod.uid, pod_claim=ref.name
                )
                self.claims[claim.key] = claim
                made[ref.name] = claim.name
            self.statuses[pod.uid] = made
        elif not pod.is_active:
            self._release(pod)

    def _release(self, pod: Pod) -> None:
        for key, claim in list(self.claims.items()):
            if claim.owner_pod_uid == pod.uid:
                del self.claims[key]
                self.pending.pop(key, None)
                continue
            if claim.is_reserved_for(pod.uid):
                left = tuple(r for r in claim.status.reserved_for if r.uid != pod.uid)
                allocation = claim.status.allocation if left else None
                self.claims[key] = replace(claim, status=ResourceClaimStatus(allocation, left))
            pending = self.pending.get(key)
            if pending is not None and pending.pod_uid == pod.uid:
                del self.pending[key]
        self.statuses.pop(pod.uid, None)

    # ----- the scheduler -----
    def snapshot(self, nodes: list[Node], pods: list[Pod]) -> DraSnapshot:
        return DraSnapshot(
            slices=self.published(nodes),
            classes=dict(self.classes),
            claims=dict(self.claims),
            pods={
                p.uid: PodClaims(p.template.resource_claims, self.statuses.get(p.uid, {}))
                for p in pods
                if p.template.resource_claims
            },
            pending=dict(self.pending),
        )

    def apply(
        self, written: Iterable[ResourceClaim], pending: Mapping[str, PendingAllocation]
    ) -> None:
        """A decision's writes: claim statuses, and the allocations in flight after it."""
        for claim in written:
            if claim.key in self.claims:
                self.claims[claim.key] = claim
        self.pending = {k: v for k, v in pending.items() if k in self.claims}

    def gpus_of(self, pod: Pod) -> list[tuple[int, str]]:
        """(GPU index, device name) of every device the pod's claims hold on its node."""
        out: list[tuple[int, str]] = []
        for claim in self.claims.values():
            allocation = claim.status.allocation
            if allocation is None or not claim.is_reserved_for(pod.uid):
                continue
            for result in allocation.devices.results:
                m = _GPU_OF.match(result.device)
                if m is not None:
                    out.append((int(m.group(1)), result.device))
        return out
