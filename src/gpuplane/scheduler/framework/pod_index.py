"""Pods grouped by namespace and labels, counted per node: what PodTopologySpread and
InterPodAffinity count, and the pods that carry pod (anti-)affinity rules.

kube-scheduler counts matching pods node by node (NodeInfo.Pods, PodsWithAffinity,
PodsWithRequiredAntiAffinity). Pods stamped from one template share their labels, so gpuplane
keeps groups of equal labels instead: a selector is matched once per group, and each group knows
how many of its pods sit on each node. The owner of a cluster's books (the twin's snapshot
builder) keeps one incrementally and hands it in the snapshot; without it ``ClusterState`` builds
one from the snapshot's bound pods the first time a plugin asks. ``ClusterState`` keeps a second
one for the pods it assumes during a decision.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from gpuplane.scheduler.framework.types import BoundPod, PodInfo

# A pod whose rules other pods are checked against: bound, assumed, nominated or the incoming one.
AnyPod = BoundPod | PodInfo
_LabelKey = frozenset[tuple[str, str]]


def has_pod_affinity(affinity: Mapping[str, object] | None) -> bool:
    """Whether spec.affinity holds podAffinity or podAntiAffinity (kube: PodsWithAffinity)."""
    if not affinity:
        return False
    return affinity.get("podAffinity") is not None or affinity.get("podAntiAffinity") is not None


@dataclass(slots=True)
class LabelGroup:
    """Pods of one namespace with equal labels: how many on each node (by name), and how many of
    those are terminating."""

    namespace: str
    labels: Mapping[str, str]
    nodes: dict[str, int] = field(default_factory=dict)
    terminating: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PlacedPod:
    """A pod with pod (anti-)affinity and the node it is on."""

    pod: AnyPod
    node: str


class PodLabelIndex:
    """Owner of the groups (mutable): ``add`` a pod on a node, ``remove`` it by uid."""

    def __init__(self) -> None:
        self._groups: dict[str, dict[_LabelKey, LabelGroup]] = {}
        self._placed: dict[str, tuple[str, _LabelKey, str, bool]] = {}
        self._with_affinity: dict[str, PlacedPod] = {}

    @classmethod
    def of_bound(cls, pods: Iterable[BoundPod]) -> PodLabelIndex:
        index = cls()
        for pod in pods:
            index.add(pod, pod.node, terminating=pod.terminating)
        return index

    def __len__(self) -> int:
        return len(self._placed)

    def add(self, pod: AnyPod, node: str, *, terminating: bool = False) -> None:
        if pod.uid in self._placed:
            self.remove(pod.uid)
        key: _LabelKey = frozenset(pod.labels.items())
        groups = self._groups.setdefault(pod.namespace, {})
        group = groups.get(key)
        if group is None:
            group = groups[key] = LabelGroup(pod.namespace, dict(pod.labels))
        group.nodes[node] = group.nodes.get(node, 0) + 1
        if terminating:
            group.terminating[node] = group.terminating.get(node, 0) + 1
        self._placed[pod.uid] = (pod.namespace, key, node, terminating)
        if has_pod_affinity(pod.affinity):
            self._with_affinity[pod.uid] = PlacedPod(pod, node)

    def remove(self, uid: str) -> None:
        placed = self._placed.pop(uid, None)
        if placed is None:
            return
        namespace, key, node, terminating = placed
        groups = self._groups[namespace]
        group = groups[key]
        _decrement(group.nodes, node)
        if terminating:
            _decrement(group.terminating, node)
        if not group.nodes:
            del groups[key]
            if not groups:
                del self._groups[namespace]
        self._with_affinity.pop(uid, None)

    def groups(self, namespace: str) -> Iterable[LabelGroup]:
        return self._groups.get(namespace, {}).values()

    def all_groups(self) -> Iterator[LabelGroup]:
        for groups in self._groups.values():
            yield from groups.values()

    def with_affinity(self) -> Iterable[PlacedPod]:
        """The pods carrying pod (anti-)affinity rules."""
        return self._with_affinity.values()


def _decrement(counts: dict[str, int], node: str) -> None:
    left = counts[node] - 1
    if left:
        counts[node] = left
    else:
        del counts[node]
