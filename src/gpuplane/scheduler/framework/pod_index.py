"""Pods grouped by namespace and labels, counted per node: what PodTopologySpread and
InterPodAffinity count, and the pods that carry pod (anti)-affinity rules, grouped the same way.

kube-scheduler counts matching pods node by node (NodeInfo.Pods, PodsWithAffinity,
PodsWithRequiredAntiAffinity). Pods stamped from one template share their labels and rules, so
gpuplane keeps groups instead: a selector is matched once per group, and each group knows how
many of its pods sit on each node. Groups are also found by any one of their labels, so a
selector with an equality requirement looks only at the groups carrying that label.

The owner of a cluster's books (the twin's snapshot builder) keeps one incrementally and hands
it in the snapshot; without it ``ClusterState`` builds one from the snapshot's bound pods the
first time a plugin asks. ``ClusterState`` keeps a second one for the pods it assumes during a
decision.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from gpuplane.api.selectors import LabelSelector
from gpuplane.scheduler.framework.types import BoundPod, PodInfo

# A pod whose rules other pods are checked against: bound, assumed, nominated or the incoming one.
AnyPod = BoundPod | PodInfo
_LabelKey = frozenset[tuple[str, str]]
_RuleKey = tuple[str, _LabelKey, str]


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


@dataclass(slots=True)
class AffinityGroup:
    """Pods of one namespace with equal labels and equal pod (anti-)affinity: ``pod`` is one of
    them (their rules are its), ``nodes`` how many sit on each node."""

    pod: AnyPod
    nodes: dict[str, int] = field(default_factory=dict)


def _equality(selector: LabelSelector) -> tuple[str, str] | None:
    """A (key, value) every pod the selector matches carries, if the selector names one."""
    for r in selector.requirements:
        if r.op in ("=", "in") and len(r.values) == 1:
            return r.key, r.values[0]
    return None


class PodLabelIndex:
    """Owner of the groups (mutable): ``add`` a pod on a node, ``remove`` it by uid."""

    def __init__(self) -> None:
        self._groups: dict[str, dict[_LabelKey, LabelGroup]] = {}
        # namespace -> (label, value) -> the label keys of the groups carrying it
        self._by_label: dict[str, dict[tuple[str, str], set[_LabelKey]]] = {}
        self._placed: dict[str, tuple[str, _LabelKey, str, bool, _RuleKey | None]] = {}
        self._rules: dict[_RuleKey, AffinityGroup] = {}

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
            by_label = self._by_label.setdefault(pod.namespace, {})
            for pair in key:
                by_label.setdefault(pair, set()).add(key)
        _increment(group.nodes, node)
        if terminating:
            _increment(group.terminating, node)
        rule: _RuleKey | None = None
        if has_pod_affinity(pod.affinity):
            rule = (pod.namespace, key, repr(pod.affinity))
            _increment(self._rules.setdefault(rule, AffinityGroup(pod)).nodes, node)
        self._placed[pod.uid] = (pod.namespace, key, node, terminating, rule)

    def remove(self, uid: str) -> None:
        placed = self._placed.pop(uid, None)
        if placed is None:
            return
        namespace, key, node, terminating, rule = placed
        groups = self._groups[namespace]
        group = groups[key]
        _decrement(group.nodes, node)
        if terminating:
            _decrement(group.terminating, node)
        if not group.nodes:
            del groups[key]
            by_label = self._by_label[namespace]
            for pair in key:
                by_label[pair].discard(key)
                if not by_label[pair]:
                    del by_label[pair]
        if rule is not None:
            ruled = self._rules[rule]
            _decrement(ruled.nodes, node)
            if not ruled.nodes:
                del self._rules[rule]

    def groups(self, namespace: str, selector: LabelSelector | None = None) -> Iterable[LabelGroup]:
        """The groups of ``namespace``; with ``selector``, at least those it may match."""
        groups = self._groups.get(namespace)
        if not groups:
            return ()
        pair = _equality(selector) if selector is not None else None
        if pair is None:
            return groups.values()
        keys = self._by_label[namespace].get(pair, ())
        return [groups[k] for k in keys]

    def all_groups(self, selector: LabelSelector | None = None) -> Iterator[LabelGroup]:
        """Every namespace's groups (with ``selector``, at least those it may match)."""
        for namespace in self._groups:
            yield from self.groups(namespace, selector)

    def with_affinity(self) -> Collection[AffinityGroup]:
        """The pods carrying pod (anti-)affinity rules, by equal labels and rules."""
        return self._rules.values()


def _increment(counts: dict[str, int], node: str) -> None:
    counts[node] = counts.get(node, 0) + 1


def _decrement(counts: dict[str, int], node: str) -> None:
    left = counts[node] - 1
    if left:
        counts[node] = left
    else:
        del counts[node]
