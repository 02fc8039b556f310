"""What selects a pod, for kube-scheduler's DefaultSelector (framework/plugins/helper/spread.go,
v1.31): the labels of the Services in its namespace whose selector matches it, merged; then its
controller's selector (controller ownerReference): a ReplicationController's labels merged in,
a ReplicaSet's or StatefulSet's requirements added. PodTopologySpread's system default
constraints spread a pod over the pods this selects; nothing selecting it means no default
spreading (the same rule as the twin's ``twin.scheduling.spread_selector``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpuplane.api.owner import OwnerRef
from gpuplane.api.selectors import LabelSelector, with_match_labels


@dataclass(frozen=True, slots=True)
class Selecting:
    """The objects that select pods, by namespace."""

    services: Mapping[str, tuple[Mapping[str, str], ...]] = field(default_factory=dict)
    # (kind, namespace, name) -> the controller's selector, as DefaultSelector combines it.
    controllers: Mapping[tuple[str, str, str], tuple[Mapping[str, str], LabelSelector | None]] = (
        field(default_factory=dict)
    )


def default_selector(
    sel: Selecting,
    namespace: str,
    labels: Mapping[str, str],
    owner: OwnerRef | None,
    owner_selector: LabelSelector | None = None,
) -> LabelSelector | None:
    """DefaultSelector for a pod; ``owner_selector`` stands in for a controller the snapshot
    does not hold (a workload's own Deployment/StatefulSet). None: nothing selects it."""
    merged: dict[str, str] = {}
    for service in sel.services.get(namespace, ()):
        if all(labels.get(k) == v for k, v in service.items()):
            merged.update(service)
    extra: LabelSelector | None = owner_selector
    if owner is not None and extra is None:
        found = sel.controllers.get((owner.kind, owner.namespace, owner.name))
        if found is not None:
            merged.update(found[0])
            extra = found[1]
    result = with_match_labels(merged, extra or LabelSelector(""))
    return None if result.is_empty else result
