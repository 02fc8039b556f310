"""InterPodAffinity's PreFilter state and Filter rules (kube-scheduler v1.31
framework/plugins/interpodaffinity/filtering.go), counted per (topology key, value) pair.

PreFilter, once per pod:
- existing anti-affinity: for every existing pod's required anti-affinity term that matches the
  incoming pod, +1 on the pair (term's key, that pod's node's value);
- affinity: for every existing pod matching *all* the incoming pod's required affinity terms,
  +1 on each term's pair at that pod's node;
- anti-affinity: for every incoming required anti-affinity term, +1 on its pair for each
  existing pod it matches.
Nothing to count and no incoming required term: Skip (Filter does not run).

Filter, node ``n``, in this order:
1. every affinity term's key on ``n`` with a count > 0 on its pair, else ``node(s) didn't match
   pod affinity rules`` (UnschedulableAndUnresolvable); a node lacking a key fails always; with
   no count anywhere, a pod matching all its own affinity terms passes (the first of a group);
2. no anti-affinity term whose pair at ``n`` has a count: ``node(s) didn't match pod
   anti-affinity rules`` (Unschedulable);
3. no (label, value) of ``n`` carrying an existing pod's anti-affinity: ``node(s) didn't satisfy
   existing pods anti-affinity rules`` (Unschedulable).
Pods added to or taken off ``n`` for one run (nominated pods; preemption's dry run) update the
counts on ``n``'s pairs (AddPod/RemovePod).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from gpuplane.scheduler.framework.pod_counts import counts_per_node
from gpuplane.scheduler.framework.pod_index import AnyPod, LabelGroup
from gpuplane.scheduler.framework.state import ClusterState
from gpuplane.scheduler.framework.types import IntArray, PodInfo
from gpuplane.scheduler.plugins.interpodaffinity.terms import AffinityTerm, PodTerms, TermCache
from gpuplane.scheduler.plugins.topology_domains import DomainCache, KeyDomains, pair_counts

PASS, AFFINITY, ANTI_AFFINITY, EXISTING_ANTI_AFFINITY = 0, 1, 2, 3
Pair = tuple[str, str]
Counts = dict[Pair, int]


@dataclass(frozen=True, slots=True)
class AffinityFilterState:
    pod: PodInfo
    namespace_labels: Mapping[str, str] | None
    affinity: tuple[AffinityTerm, ...]
    anti: tuple[AffinityTerm, ...]
    existing_anti: Counts
    affinity_counts: Counts
    anti_counts: Counts
    self_match: bool  # the pod matches all its own affinity terms


def matches_all(terms: tuple[AffinityTerm, ...], namespace: str, labels: Mapping[str, str]) -> bool:
    """podMatchesAllAffinityTerms (false for no terms); the terms' namespaces are merged."""
    return bool(terms) and all(t.matches(namespace, labels, None) for t in terms)


def _add(counts: Counts, pair: Pair, value: int) -> None:
    total = counts.get(pair, 0) + value
    if total:
        counts[pair] = total
    else:
        counts.pop(pair, None)


def existing_anti_counts(
    st: ClusterState, pod: PodInfo, ns_labels: Mapping[str, str] | None, cache: TermCache
) -> Counts:
    out: Counts = {}
    labels_of, where = st.snap.node_labels, st.node_index()
    for group in chain(st.bound_with_affinity(), st.assumed_pods.with_affinity()):
        terms = cache.get(group.pod).required_anti
        hits = [t for t in terms if t.matches(pod.namespace, pod.labels, ns_labels)]
        for node, count in group.nodes.items() if hits else ():
            i = where.get(node)
            if i is None:
                continue
            for t in hits:
                value = labels_of[i].get(t.topology_key)
                if value is not None:
                    _add(out, (t.topology_key, value), count)
    return out


def _namespaces(terms: tuple[AffinityTerm, ...]) -> Sequence[str | None]:
    """Where pods matching all ``terms`` can be: the namespaces every term selects."""
    named = [t.namespaces for t in terms if not t.all_namespaces]
    if not named:
        return [None]
    return sorted(frozenset.intersection(*named))


def pods_matching_all(st: ClusterState, terms: tuple[AffinityTerm, ...]) -> IntArray:
    """Per node, the bound and assumed pods matching every one of ``terms``."""

    def test(group: LabelGroup) -> bool:
        return all(t.matches(group.namespace, group.labels, None) for t in terms)

    hint = terms[0].selector
    out = np.zeros(st.num_nodes, dtype=np.int64)
    if hint is None:  # a nil selector matches no pod
        return out
    for namespace in _namespaces(terms):
        out = out + counts_per_node(st, ("pod-affinity", terms), namespace, test, hint=hint)
    return out


def pair_totals(domains: KeyDomains, per_node: IntArray) -> Counts:
    """Per-node counts summed per (key, value) over the nodes that have the key."""
    on = domains.present & (per_node > 0)
    sums = np.bincount(domains.ids[on], weights=per_node[on], minlength=domains.num_domains)
    return {(domains.key, domains.values[d]): int(sums[d]) for d in np.flatnonzero(sums)}


def incoming_counts(
    st: ClusterState, terms: PodTerms, domain_cache: DomainCache
) -> tuple[Counts, Counts]:
    affinity: Counts = {}
    anti: Counts = {}
    if terms.required_affinity:
        per_node = pods_matching_all(st, terms.required_affinity)
        for t in terms.required_affinity:
            domains = domain_cache.get(st.snap, t.topology_key)
            for pair, count in pair_totals(domains, per_node).items():
                _add(affinity, pair, count)
    for t in terms.required_anti:
        per_node = pods_matching_all(st, (t,))
        domains = domain_cache.get(st.snap, t.topology_key)
        for pair, count in pair_totals(domains, per_node).items():
            _add(anti, pair, count)
    return affinity, anti


def _lookup(domain_cache: DomainCache, st: ClusterState, key: str, counts: Counts) -> IntArray:
    """Per node, the count on the node's pair for ``key`` (0 where the node lacks the key)."""
    domains = domain_cache.get(st.snap, key)
    values = pair_counts(domains, counts)[domains.ids]
    out: IntArray = np.where(domains.present, values, 0)
    return out


def filter_codes(state: AffinityFilterState, st: ClusterState, domains: DomainCache) -> IntArray:
    codes = np.zeros(st.num_nodes, dtype=np.int64)
    if state.affinity:
        has_keys = np.ones(st.num_nodes, dtype=bool)
        exist = np.ones(st.num_nodes, dtype=bool)
        for t in state.affinity:
            has_keys &= domains.get(st.snap, t.topology_key).present
            exist &= _lookup(domains, st, t.topology_key, state.affinity_counts) > 0
        first = not state.affinity_counts and state.self_match
        codes[~has_keys | (~exist & (not first))] = AFFINITY
    if state.anti_counts:
        bad = np.zeros(st.num_nodes, dtype=bool)
        for t in state.anti:
            bad |= _lookup(domains, st, t.topology_key, state.anti_counts) > 0
        codes[(codes == PASS) & bad] = ANTI_AFFINITY
    if state.existing_anti:
        bad = np.zeros(st.num_nodes, dtype=bool)
        for key in sorted({k for k, _ in state.existing_anti}):
            bad |= _lookup(domains, st, key, state.existing_anti) > 0
        codes[(codes == PASS) & bad] = EXISTING_ANTI_AFFINITY
    return codes


def _moved(
    state: AffinityFilterState,
    cache: TermCache,
    labels: Mapping[str, str],
    moved: Iterable[tuple[AnyPod, int]],
) -> tuple[Counts, Counts, Counts]:
    """The three counts once ``moved`` pods (pod, +1 added or -1 taken off) are on the node with
    ``labels`` (preFilterState.updateWithPod)."""
    existing, affinity, anti = (
        dict(state.existing_anti),
        dict(state.affinity_counts),
        dict(state.anti_counts),
    )
    pod = state.pod
    for other, sign in moved:
        for t in cache.get(other).required_anti:
            value = labels.get(t.topology_key)
            if value is not None and t.matches(pod.namespace, pod.labels, state.namespace_labels):
                _add(existing, (t.topology_key, value), sign)
        if matches_all(state.affinity, other.namespace, other.labels):
            for t in state.affinity:
                if t.topology_key in labels:
                    _add(affinity, (t.topology_key, labels[t.topology_key]), sign)
        for t in state.anti:
            if t.topology_key in labels and t.matches(other.namespace, other.labels, None):
                _add(anti, (t.topology_key, labels[t.topology_key]), sign)
    return existing, affinity, anti


def node_code(state: AffinityFilterState, st: ClusterState, i: int, cache: TermCache) -> int:
    """The rules on node ``i`` alone, with the pods added to or taken off it for this run."""
    labels = st.snap.node_labels[i]
    existing, affinity, anti = state.existing_anti, state.affinity_counts, state.anti_counts
    moved = [(p, 1) for p in st.added_on(i)] + [(p, -1) for p in st.removed_on(i)]
    if moved:
        existing, affinity, anti = _moved(state, cache, labels, moved)
    if state.affinity:
        exist = True
        for t in state.affinity:
            value = labels.get(t.topology_key)
            if value is None:
                return AFFINITY
            exist = exist and affinity.get((t.topology_key, value), 0) > 0
        if not exist and not (not affinity and state.self_match):
            return AFFINITY
    if anti:
        for t in state.anti:
            value = labels.get(t.topology_key)
            if value is not None and anti.get((t.topology_key, value), 0) > 0:
                return ANTI_AFFINITY
    if existing and any(existing.get(pair, 0) > 0 for pair in labels.items()):
        return EXISTING_ANTI_AFFINITY
    return PASS
