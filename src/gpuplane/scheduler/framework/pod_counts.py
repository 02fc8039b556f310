"""Pods counted per node over what one decision sees: the snapshot's bound pods and the pods
assumed so far, grouped by labels (``pod_index``).

The bound part of a count depends only on the snapshot, so it is computed once per decision and
kept in ``ClusterState.memo`` under the caller's key; the assumed part is added each time, as
kube-scheduler's NodeInfo holds assumed pods beside bound ones. Pods added to or taken off one
node for a single filter run (``added_on``, ``removed_on``) are the caller's to adjust.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

import numpy as np

from gpuplane.api.selectors import LabelSelector
from gpuplane.scheduler.framework.pod_index import LabelGroup, PodLabelIndex
from gpuplane.scheduler.framework.state import ClusterState
from gpuplane.scheduler.framework.types import IntArray

GroupTest = Callable[[LabelGroup], bool]


def index_counts(
    st: ClusterState, groups: Iterable[LabelGroup], test: GroupTest, *, skip_terminating: bool
) -> IntArray:
    """Per node, the pods of the groups that pass ``test`` (terminating ones left out if asked)."""
    out = np.zeros(st.num_nodes, dtype=np.int64)
    where = st.node_index()
    for group in groups:
        if not test(group):
            continue
        for node, count in group.nodes.items():
            i = where.get(node)
            if i is not None:
                out[i] += count
        if skip_terminating:
            for node, count in group.terminating.items():
                i = where.get(node)
                if i is not None:
                    out[i] -= count
    return out


def _groups(
    index: PodLabelIndex, namespace: str | None, hint: LabelSelector | None
) -> Iterable[LabelGroup]:
    return index.all_groups(hint) if namespace is None else index.groups(namespace, hint)


def counts_per_node(
    st: ClusterState,
    key: Hashable,
    namespace: str | None,
    test: GroupTest,
    *,
    skip_terminating: bool = False,
    hint: LabelSelector | None = None,
) -> IntArray:
    """Per node, the bound and assumed pods (of ``namespace``; None: every namespace) whose group
    passes ``test``; ``hint``, a selector every passing group matches, narrows the groups
    looked at. The bound part is kept under ``key`` for the rest of the decision (read-only)."""
    memo_key = ("pod-counts", key, namespace, skip_terminating)
    base = st.memo.get(memo_key)
    if not isinstance(base, np.ndarray):
        groups = _groups(st.bound_index(), namespace, hint)
        base = index_counts(st, groups, test, skip_terminating=skip_terminating)
        st.memo[memo_key] = base
    if not len(st.assumed_pods):
        return base
    groups = _groups(st.assumed_pods, namespace, hint)
    assumed = index_counts(st, groups, test, skip_terminating=skip_terminating)
    out: IntArray = base + assumed
    return out


def matching_per_node(
    st: ClusterState, namespace: str, selector: LabelSelector, *, skip_terminating: bool
) -> IntArray:
    """Per node, the pods of ``namespace`` whose labels ``selector`` matches."""

    def test(group: LabelGroup) -> bool:
        return selector.matches(group.labels)

    key = ("selector", selector)
    return counts_per_node(
        st, key, namespace, test, skip_terminating=skip_terminating, hint=selector
    )
