"""Finding the nodes that fit (kube-scheduler: schedule_one.go findNodesThatFitPod,
findNodesThatPassFilters, numFeasibleNodesToFind; framework/runtime/framework.go
RunFilterPluginsWithNominatedPods).

Vectorised: every Filter plugin answers for all nodes at once, the masks are ANDed, and the first
``numFeasibleNodesToFind`` feasible nodes from the round-robin start index are kept. A node is
charged to the first plugin that rejects it, as kube-scheduler stops at the first failing filter.

A Filter that answers Error rather than rejecting (only plugins with ``filter_may_error``) ends
the search where kube-scheduler's would meet it: the attempt fails with that error, whatever
other nodes fit (findNodesThatPassFilters cancels the remaining checks).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gpuplane.scheduler.framework.explain import Diagnosis, ReasonGroup, filter_error
from gpuplane.scheduler.framework.interfaces import FilterPlugin, pre_filter_nodes
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.status import Code
from gpuplane.scheduler.framework.types import BoolArray, IntArray, PodInfo

# schedule_one.go: minFeasibleNodesToFind, minFeasibleNodesPercentageToFind.
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5

Masks = list[tuple[FilterPlugin, BoolArray | None]]


def num_feasible_nodes_to_find(percentage: int | None, num_nodes: int, has_scoring: bool) -> int:
    """How many feasible nodes end the search (schedule_one.go numFeasibleNodesToFind): all of
    them below 100 nodes; else ``percentage`` of them, adaptive when unset or 0
    (50% - 1% per 125 nodes, at least 5%), and never fewer than 100. One when nothing scores."""
    if not has_scoring:
        return 1
    if num_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_nodes
    pct = percentage or 0
    if pct == 0:
        pct = max(50 - num_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_nodes * pct // 100, MIN_FEASIBLE_NODES_TO_FIND)


def filter_pass(
    filters: Sequence[FilterPlugin], cs: CycleState, pod: PodInfo, st: ClusterState
) -> tuple[BoolArray, Masks]:
    """The AND of every plugin's mask, and each plugin's mask for a later diagnosis."""
    masks: Masks = []
    mask: BoolArray | None = None
    skipped = cs.skip_filter
    for plugin in filters:
        if skipped and plugin.name in skipped:
            continue
        m = plugin.filter(cs, pod, st)
        masks.append((plugin, m))
        if m is not None:
            mask = m if mask is None else mask & m
    if mask is None:
        mask = np.ones(st.num_nodes, dtype=bool)
    return mask, masks


def candidates(cs: CycleState, st: ClusterState) -> BoolArray:
    """The nodes PreFilter left to filter (all, unless a PreFilter plugin named some)."""
    named = pre_filter_nodes(cs)
    mask = np.ones(st.num_nodes, dtype=bool)
    if named is not None:
        mask[:] = False
        mask[named] = True
    return mask


def diagnose(
    cs: CycleState, pod: PodInfo, st: ClusterState, masks: Masks, among: BoolArray | None = None
) -> Diagnosis:
    """Each rejected node (of ``among``, default all) under the first plugin that rejected it,
    with that plugin's reasons; nodes PreFilter left out have no status (absent from the
    reasons)."""
    remaining = candidates(cs, st)
    if among is not None:
        remaining &= among
    groups: list[ReasonGroup] = []
    plugins: set[str] = set()
    for plugin, m in masks:
        if m is None:
            continue
        failed = np.flatnonzero(remaining & ~m)
        if failed.size:
            groups.extend(plugin.filter_reasons(cs, pod, st, failed))
            plugins.add(plugin.name)
            remaining[failed] = False
    return Diagnosis(
        st.num_nodes,
        st.snap.node_names,
        tuple(groups),
        unschedulable_plugins=frozenset(plugins),
    )


def charge_nominated(st: ClusterState, nominated: dict[int, list[PodInfo]], sign: int) -> None:
    for i, pods in nominated.items():
        for other in pods:
            st.add_nominated(i, other, sign)


def filter_all(
    filters: Sequence[FilterPlugin], cs: CycleState, pod: PodInfo, st: ClusterState
) -> tuple[BoolArray, Masks, Diagnosis | None]:
    """Feasible-node mask over all nodes, each plugin's mask of the deciding pass, and the
    diagnosis when none is feasible.

    Nodes with equal- or higher-priority nominated pods must fit the pod both with those pods
    counted and without them (RunFilterPluginsWithNominatedPods); the rejection reported is the
    one with them counted, or the one without them for a node that fits only with them (pod
    affinity to a nominated pod).
    """
    nominated = st.nominated_for(pod) if st.nominated else {}
    plain, masks = filter_pass(filters, cs, pod, st)
    if pre_filter_nodes(cs) is not None:
        plain = plain & candidates(cs, st)
    if not nominated:
        return plain, masks, None if plain.any() else diagnose(cs, pod, st, masks)
    charge_nominated(st, nominated, 1)
    try:
        with_nominated, masks = filter_pass(filters, cs, pod, st)
        mask = plain & with_nominated
        if mask.any():
            return mask, masks, None
        diagnosis = diagnose(cs, pod, st, masks)
    finally:
        charge_nominated(st, nominated, -1)
    helped = with_nominated & ~plain  # fit only with the nominated pods counted
    if not (helped & candidates(cs, st)).any():
        return mask, masks, diagnosis
    _, plain_masks = filter_pass(filters, cs, pod, st)  # the plugins' reasons without them
    without = diagnose(cs, pod, st, plain_masks, among=helped)
    groups = diagnosis.groups + without.groups
    plugins = diagnosis.unschedulable_plugins | without.unschedulable_plugins
    diagnosis = Diagnosis(st.num_nodes, st.snap.node_names, groups, unschedulable_plugins=plugins)
    return mask, masks, diagnosis


def filter_errors(cs: CycleState, pod: PodInfo, st: ClusterState, masks: Masks) -> dict[int, str]:
    """Nodes whose Filter ended in an Error, with the framework's message. A node counts when
    the plugin answering Error is the first not to pass it (later plugins never run there); only
    plugins with ``filter_may_error = True`` are asked, the others only ever reject."""
    passed = candidates(cs, st)
    found: dict[int, str] = {}
    for plugin, m in masks:
        if m is None:
            continue
        rejected = np.flatnonzero(passed & ~m)
        if rejected.size and getattr(plugin, "filter_may_error", False):
            for group in plugin.filter_reasons(cs, pod, st, rejected):
                if group.code is Code.ERROR:
                    message = filter_error(plugin.name, group.reason)
                    found.update((int(i), message) for i in group.nodes)
        passed &= m
    return found


def first_error(
    st: ClusterState,
    feasible: IntArray,
    errors: dict[int, str],
    k: int,
    named: IntArray | None = None,
) -> str | None:
    """The Error the search meets first, or None.

    The search visits the nodes as ``first_feasible`` does: from the round-robin start until the
    (k+1)-th feasible node (or only the nodes PreFilter named, all of them, in index order). On an
    Error it stops there, and the start moves past the nodes checked before it (kube updates
    nextStartNodeIndex whether or not an error occurred).
    """
    if not errors:
        return None
    n = st.num_nodes
    if named is not None:
        order, stop = named, named.size
    else:
        order = (st.next_start + np.arange(n, dtype=np.int64)) % n if n else feasible[:0]
        fits = np.zeros(n, dtype=bool)
        fits[feasible] = True
        positions = np.flatnonzero(fits[order])
        stop = int(positions[k]) if positions.size > k else n
    erring = np.zeros(n, dtype=bool)
    erring[list(errors)] = True
    hits = np.flatnonzero(erring[order[:stop]])
    if not hits.size:
        return None
    offset = int(hits[0])
    size = order.size
    st.next_start = (st.next_start + offset) % size if size else 0
    return errors[int(order[offset])]


def first_feasible(
    st: ClusterState, feasible: IntArray, k: int, named: IntArray | None = None
) -> IntArray:
    """The first ``k`` feasible nodes from the round-robin start, and the start moved on.

    kube-scheduler checks nodes from nextStartNodeIndex and cancels the search when the
    (k+1)-th feasible node turns up; the next search starts after the nodes it processed.
    With the nodes PreFilter ``named``, kube searches only them (in a set's order) and moves the
    start by the nodes processed modulo their number; here they are taken in index order.
    """
    if named is not None:
        processed = named.size if feasible.size <= k else k + (named.size - feasible.size)
        st.next_start = (st.next_start + processed) % named.size if named.size else 0
        return feasible[:k]
    n = st.num_nodes
    start = st.next_start
    pos = int(np.searchsorted(feasible, start))
    rotated = np.concatenate((feasible[pos:], feasible[:pos])) if pos else feasible
    processed = n if rotated.size <= k else (int(rotated[k]) - start) % n
    st.next_start = (start + processed) % n if n else 0
    return rotated[:k]
