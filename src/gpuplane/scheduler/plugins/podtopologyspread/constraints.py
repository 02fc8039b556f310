"""PodTopologySpread's constraints for one pod, and the nodes each constraint counts
(kube-scheduler v1.31 framework/plugins/podtopologyspread/common.go and plugin.go).

- A pod's own ``spec.topologySpreadConstraints`` apply when it has any, each at the point its
  ``whenUnsatisfiable`` names (DoNotSchedule: Filter; ScheduleAnyway: Score). Left-out fields
  take the plugin's defaults: minDomains 1, nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore.
  ``matchLabelKeys`` add ``key=value`` of the pod's own labels to the selector (keys the pod
  lacks are ignored; a nil selector stays nil).
- A pod without constraints gets the default ones (PodTopologySpreadArgs; with defaultingType
  System: maxSkew 3 over ``kubernetes.io/hostname`` and 5 over ``topology.kubernetes.io/zone``,
  both ScheduleAnyway), each with the pod's default selector (``PodInfo.default_spread_selector``,
  kube's DefaultSelector); none when no object selects the pod or its selector is empty.
- A node counts for a constraint when it has every topology key of the pod's constraints (at
  that point) and passes the inclusion policies: Honor of nodeAffinityPolicy means the pod's
  nodeSelector and required node affinity must match the node; Honor of nodeTaintsPolicy means
  the pod must tolerate the node's NoSchedule and NoExecute taints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from gpuplane.api.selectors import LabelSelector, with_match_labels
from gpuplane.api.taints import first_untolerated
from gpuplane.api.topology_spread import (
    HONOR,
    LABEL_HOSTNAME,
    LABEL_ZONE,
    SCHEDULE_ANYWAY,
    TopologySpreadConstraint,
    UnsatisfiableAction,
)
from gpuplane.scheduler.framework.matching import (
    node_affinity,
    required_matches,
    selector_matches,
)
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.static_cache import StaticCache
from gpuplane.scheduler.framework.types import BoolArray, BoundPod, PodInfo

# podtopologyspread/plugin.go systemDefaultConstraints (defaultingType System).
SYSTEM_DEFAULT_CONSTRAINTS: tuple[TopologySpreadConstraint, ...] = (
    TopologySpreadConstraint(3, LABEL_HOSTNAME, SCHEDULE_ANYWAY),
    TopologySpreadConstraint(5, LABEL_ZONE, SCHEDULE_ANYWAY),
)
_DO_NOT_SCHEDULE_EFFECTS = frozenset({"NoSchedule", "NoExecute"})


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """A constraint as the plugin applies it: selector resolved (None matches no pod), defaults
    filled (kube's internal topologySpreadConstraint)."""

    max_skew: int
    topology_key: str
    selector: LabelSelector | None
    min_domains: int = 1
    honor_node_affinity: bool = True
    honor_node_taints: bool = False

    def self_match(self, pod: PodInfo) -> bool:
        return self.selector is not None and self.selector.matches(pod.labels)

    def counts_pods(self) -> bool:
        """countPodsMatchSelector counts nothing for an empty selector (v1.31 returns 0 when
        ``selector.Empty()``) nor, of course, for the nil one."""
        return self.selector is not None and not self.selector.is_empty

    def counts_moved(self, namespace: str, other: PodInfo | BoundPod) -> bool:
        """Whether a pod added to or taken off a node changes the count (updateWithPod: same
        namespace as the incoming pod and the selector matches, no empty-selector shortcut)."""
        return (
            other.namespace == namespace
            and self.selector is not None
            and self.selector.matches(other.labels)
        )


def resolve(
    constraints: Sequence[TopologySpreadConstraint],
    pod_labels: Mapping[str, str],
    action: UnsatisfiableAction,
) -> tuple[SpreadConstraint, ...]:
    """filterTopologySpreadConstraints: the constraints of ``action``, selectors resolved."""
    out: list[SpreadConstraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector = c.label_selector
        if c.match_label_keys and selector is not None:
            found = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
            if found:
                selector = with_match_labels(found, selector)
        out.append(
            SpreadConstraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=selector,
                min_domains=c.min_domains if c.min_domains is not None else 1,
                honor_node_affinity=(c.node_affinity_policy or HONOR) == HONOR,
                honor_node_taints=c.node_taints_policy == HONOR,
            )
        )
    return tuple(out)


def pod_constraints(
    pod: PodInfo,
    defaults: Sequence[TopologySpreadConstraint],
    action: UnsatisfiableAction,
) -> tuple[SpreadConstraint, ...]:
    """getConstraints / initPreScoreState: the pod's own, else the defaults with its default
    selector (buildDefaultConstraints); a pod with neither costs two look-ups."""
    if pod.topology_spread_constraints:
        return resolve(pod.topology_spread_constraints, pod.labels, action)
    selector = pod.default_spread_selector
    if selector is None or selector.is_empty:
        return ()
    return tuple(replace(c, selector=selector) for c in resolve(defaults, pod.labels, action))


def has_all_keys(snap: ClusterSnapshot, constraints: Sequence[SpreadConstraint]) -> BoolArray:
    """nodeLabelsMatchSpreadConstraints for every node."""
    keys = [c.topology_key for c in constraints]
    return np.array([all(k in labels for k in keys) for labels in snap.node_labels], dtype=bool)


class InclusionCache:
    """Owner of the per-pod node masks of the inclusion policies (static: labels and taints)."""

    def __init__(self) -> None:
        self._affinity: StaticCache[BoolArray] = StaticCache()
        self._taints: StaticCache[BoolArray] = StaticCache()
        self._keys: StaticCache[BoolArray] = StaticCache()

    def all_keys(self, snap: ClusterSnapshot, constraints: Sequence[SpreadConstraint]) -> BoolArray:
        key = tuple(sorted({c.topology_key for c in constraints}))
        return self._keys.get(snap, key, lambda: has_all_keys(snap, constraints))

    def included(self, snap: ClusterSnapshot, pod: PodInfo, c: SpreadConstraint) -> BoolArray:
        """The nodes ``c``'s inclusion policies keep (all nodes when both are Ignore)."""
        mask = np.ones(snap.num_nodes, dtype=bool)
        if c.honor_node_affinity and (pod.node_selector or node_affinity(pod.affinity)):
            mask &= self._affinity_mask(snap, pod)
        if c.honor_node_taints:
            mask &= self._taint_mask(snap, pod)
        return mask

    def _affinity_mask(self, snap: ClusterSnapshot, pod: PodInfo) -> BoolArray:
        key = (tuple(sorted(pod.node_selector.items())), repr(node_affinity(pod.affinity)))

        def compute() -> BoolArray:
            names, labels = snap.node_names, snap.node_labels
            return np.array(
                [
                    selector_matches(pod.node_selector, labels[i])
                    and required_matches(pod.affinity, labels[i], names[i])
                    for i in range(snap.num_nodes)
                ],
                dtype=bool,
            )

        return self._affinity.get(snap, key, compute)

    def _taint_mask(self, snap: ClusterSnapshot, pod: PodInfo) -> BoolArray:
        def compute() -> BoolArray:
            return np.array(
                [
                    first_untolerated(taints, pod.tolerations, _DO_NOT_SCHEDULE_EFFECTS) is None
                    for taints in snap.node_taints
                ],
                dtype=bool,
            )

        return self._taints.get(snap, pod.tolerations, compute)
