"""InterPodAffinity's PreScore state, Score and NormalizeScore (kube-scheduler v1.31
framework/plugins/interpodaffinity/scoring.go), as sums per (topology key, value).

PreScore, over every existing pod (bound or assumed) of the cluster:
- each preferred affinity (anti-affinity) term of the incoming pod adds (subtracts) its weight
  on the pair (term's key, the existing pod's node's value) for every existing pod it matches;
- each existing pod's required affinity terms that match the incoming pod add
  ``hardPodAffinityWeight`` (default 1; 0 turns this off), its preferred affinity terms their
  weight, its preferred anti-affinity terms minus their weight, on the pair at its node, unless
  ``ignorePreferredTermsOfExistingPods`` is set and the incoming pod has no preferred terms.
A term only counts where the node has its key. No term matched anywhere: Skip (no Score).

Score of a node: the sum of the pairs of its labels. NormalizeScore: ``100 * (s - min) /
(max - min)`` over the feasible nodes, truncated; 0 everywhere when all are equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain

import numpy as np

from gpuplane.scheduler.framework.interfaces import MAX_NODE_SCORE
from gpuplane.scheduler.framework.state import ClusterState
from gpuplane.scheduler.framework.types import IntArray, PodInfo
from gpuplane.scheduler.plugins.interpodaffinity.filtering import pair_totals, pods_matching_all
from gpuplane.scheduler.plugins.interpodaffinity.terms import (
    AffinityTerm,
    TermCache,
    incoming_terms,
    namespace_labels,
)
from gpuplane.scheduler.plugins.topology_domains import DomainCache

Scores = dict[str, dict[str, int]]


@dataclass(frozen=True, slots=True)
class AffinityScoreState:
    # topology key -> value -> score (kube's scoreMap)
    topology_score: Mapping[str, Mapping[str, int]]


def _add(scores: Scores, key: str, value: str, amount: int) -> None:
    row = scores.setdefault(key, {})
    row[value] = row.get(value, 0) + amount


def _incoming(
    st: ClusterState, terms: tuple[AffinityTerm, ...], sign: int, domains: DomainCache
) -> Scores:
    out: Scores = {}
    for t in terms:
        per_node = pods_matching_all(st, (t,))
        totals = pair_totals(domains.get(st.snap, t.topology_key), per_node)
        for (key, value), count in totals.items():
            _add(out, key, value, sign * t.weight * count)
    return out


def _existing(
    st: ClusterState,
    pod: PodInfo,
    cache: TermCache,
    hard_weight: int,
) -> Scores:
    out: Scores = {}
    ns_labels = namespace_labels(st.snap, pod.namespace)
    labels_of, where = st.snap.node_labels, st.node_index()
    for group in chain(st.bound_with_affinity(), st.assumed_pods.with_affinity()):
        terms = cache.get(group.pod)
        weighted = [(t, t.weight) for t in terms.preferred_affinity]
        weighted += [(t, -t.weight) for t in terms.preferred_anti]
        if hard_weight > 0:
            weighted = [(t, hard_weight) for t in terms.required_affinity] + weighted
        hits = [(t, w) for t, w in weighted if t.matches(pod.namespace, pod.labels, ns_labels)]
        for node, count in group.nodes.items() if hits else ():
            i = where.get(node)
            if i is None:
                continue
            for t, amount in hits:
                value = labels_of[i].get(t.topology_key)
                if value is not None:
                    _add(out, t.topology_key, value, amount * count)
    return out


def pre_score_state(
    st: ClusterState,
    pod: PodInfo,
    cache: TermCache,
    domains: DomainCache,
    args: tuple[int, bool],
) -> AffinityScoreState | None:
    """None: Skip (nothing scores)."""
    hard_weight, ignore_existing = args
    terms = incoming_terms(cache.get(pod), st.snap)
    has_preferred = bool(terms.preferred_affinity or terms.preferred_anti)
    if not has_preferred and (ignore_existing or not st.any_pod_affinity()):
        return None
    parts = [
        _incoming(st, terms.preferred_affinity, 1, domains),
        _incoming(st, terms.preferred_anti, -1, domains),
        _existing(st, pod, cache, hard_weight),
    ]
    total: Scores = {}
    for part in parts:
        for key, row in part.items():
            for value, amount in row.items():
                _add(total, key, value, amount)
    return AffinityScoreState(total) if total else None


def scores(
    state: AffinityScoreState, st: ClusterState, nodes: IntArray, domains: DomainCache
) -> IntArray:
    out = np.zeros(nodes.size, dtype=np.int64)
    for key, row in state.topology_score.items():
        d = domains.get(st.snap, key)
        per_domain = np.zeros(d.num_domains, dtype=np.int64)
        for value, amount in row.items():
            k = d.index.get(value)
            if k is not None:
                per_domain[k] = amount
        out += np.where(d.present[nodes], per_domain[d.ids[nodes]], 0)
    return out


def score_one(state: AffinityScoreState, st: ClusterState, i: int) -> int:
    labels = st.snap.node_labels[i]
    return sum(
        row.get(labels[key], 0) for key, row in state.topology_score.items() if key in labels
    )


def normalize(raw: IntArray) -> IntArray:
    if raw.size == 0:
        return raw
    low, high = int(raw.min()), int(raw.max())
    if high == low:
        return np.zeros(raw.size, dtype=np.int64)
    spread = float(high - low)
    scaled = float(MAX_NODE_SCORE) * ((raw - low).astype(np.float64) / spread)
    out: IntArray = scaled.astype(np.int64)
    return out


def normalize_reference(raw: list[int]) -> list[int]:
    if not raw:
        return []
    low, high = min(raw), max(raw)
    if high == low:
        return [0 for _ in raw]
    return [int(float(MAX_NODE_SCORE) * (float(s - low) / float(high - low))) for s in raw]
