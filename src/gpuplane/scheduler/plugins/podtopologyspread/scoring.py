"""PodTopologySpread's PreScore state, Score and NormalizeScore (kube-scheduler v1.31
framework/plugins/podtopologyspread/scoring.go), over node columns.

PreScore, for the ScheduleAnyway constraints and the feasible nodes: a feasible node lacking one
of the topology keys is ignored when the constraints are the pod's own or listed defaults (only
the System defaults spare it, so nodes without a zone still spread by hostname). Each constraint
weighs its domains by ``log(size + 2)``, size being the number of domains among the feasible
nodes not ignored (for ``kubernetes.io/hostname``: the number of such nodes). Per domain, the
matching pods (same namespace, not terminating) on every node of the cluster that has all the
keys (when required) and passes the inclusion policies.

Score of a node: the sum, over the constraints whose key the node has, of
``count * weight + (maxSkew - 1)``, rounded half away from zero; count is the domain's, or for
hostname the node's own matching pods. NormalizeScore: ignored nodes get 0, the others
``100 * (max + min - score) / max`` over the scores of the nodes not ignored (100 everywhere
when max is 0): fewer matching pods, higher score.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gpuplane.api.topology_spread import LABEL_HOSTNAME
from gpuplane.scheduler.framework.interfaces import MAX_NODE_SCORE
from gpuplane.scheduler.framework.pod_counts import matching_per_node
from gpuplane.scheduler.framework.state import ClusterState
from gpuplane.scheduler.framework.types import BoolArray, IntArray, PodInfo
from gpuplane.scheduler.plugins.podtopologyspread.constraints import (
    InclusionCache,
    SpreadConstraint,
)
from gpuplane.scheduler.plugins.topology_domains import DomainCache, KeyDomains

# scoring.go invalidScore: what Score returns here for an ignored node, so that NormalizeScore,
# which sees only the scores, knows it.
IGNORED = -1


@dataclass(frozen=True, slots=True)
class ScoreConstraint:
    constraint: SpreadConstraint
    domains: KeyDomains
    weight: float
    # Matching pods per domain (other keys) or per node (hostname), indexed as named.
    counts: IntArray
    per_node: bool


@dataclass(frozen=True, slots=True)
class SpreadScoreState:
    constraints: tuple[ScoreConstraint, ...]
    ignored: BoolArray  # per node


def go_round(x: float) -> int:
    """Go's math.Round for x >= 0: halves away from zero (Python's round() goes to even)."""
    whole = math.floor(x)
    return whole + 1 if x - whole >= 0.5 else whole


def _pods(st: ClusterState, pod: PodInfo, c: SpreadConstraint) -> IntArray:
    if not c.counts_pods():
        return np.zeros(st.num_nodes, dtype=np.int64)
    assert c.selector is not None
    return matching_per_node(st, pod.namespace, c.selector, skip_terminating=True)


def pre_score_state(
    st: ClusterState,
    pod: PodInfo,
    nodes: IntArray,
    constraints: tuple[SpreadConstraint, ...],
    require_all_keys: bool,
    caches: tuple[DomainCache, InclusionCache],
) -> SpreadScoreState:
    domain_cache, inclusion = caches
    all_keys = inclusion.all_keys(st.snap, constraints)
    ignored = np.zeros(st.num_nodes, dtype=bool)
    if require_all_keys:
        ignored[nodes] = ~all_keys[nodes]
    kept = nodes[~ignored[nodes]]
    out = []
    for c in constraints:
        domains = domain_cache.get(st.snap, c.topology_key)
        pods = _pods(st, pod, c)
        if c.topology_key == LABEL_HOSTNAME:
            out.append(ScoreConstraint(c, domains, math.log(kept.size + 2), pods, True))
            continue
        in_use = np.zeros(domains.num_domains, dtype=bool)
        in_use[domains.ids[kept]] = True
        counted = inclusion.included(st.snap, pod, c)
        if require_all_keys:
            counted = counted & all_keys
        ids = domains.ids[counted]
        per_domain = np.bincount(ids, weights=pods[counted], minlength=domains.num_domains)
        counts = np.where(in_use, per_domain, 0).astype(np.int64)
        weight = math.log(int(np.count_nonzero(in_use)) + 2)
        out.append(ScoreConstraint(c, domains, weight, counts, False))
    return SpreadScoreState(tuple(out), ignored)


def scores(state: SpreadScoreState, nodes: IntArray) -> IntArray:
    """Score for every node of ``nodes`` (IGNORED for ignored ones)."""
    total = np.zeros(nodes.size, dtype=np.float64)
    for sc in state.constraints:
        index = nodes if sc.per_node else sc.domains.ids[nodes]
        term = sc.counts[index].astype(np.float64) * sc.weight + float(sc.constraint.max_skew - 1)
        total += np.where(sc.domains.present[nodes], term, 0.0)
    whole = np.floor(total)
    out = (whole + (total - whole >= 0.5)).astype(np.int64)
    out[state.ignored[nodes]] = IGNORED
    return out


def score_one(state: SpreadScoreState, i: int) -> int:
    """The reference: node ``i`` alone."""
    if state.ignored[i]:
        return IGNORED
    total = 0.0
    for sc in state.constraints:
        if sc.domains.present[i]:
            count = int(sc.counts[i if sc.per_node else int(sc.domains.ids[i])])
            total += float(count) * sc.weight + float(sc.constraint.max_skew - 1)
    return go_round(total)


def normalize(raw: IntArray) -> IntArray:
    valid = raw != IGNORED
    if not valid.any():
        return np.zeros(raw.size, dtype=np.int64)
    low, high = int(raw[valid].min()), int(max(int(raw[valid].max()), 0))
    if high == 0:
        out = np.full(raw.size, MAX_NODE_SCORE, dtype=np.int64)
    else:
        out = MAX_NODE_SCORE * (high + low - raw) // high
    out[~valid] = 0
    return out


def normalize_reference(raw: list[int]) -> list[int]:
    valid = [s for s in raw if s != IGNORED]
    low, high = min(valid, default=0), max([0, *valid])
    out = []
    for s in raw:
        if s == IGNORED:
            out.append(0)
        elif high == 0:
            out.append(MAX_NODE_SCORE)
        else:
            out.append(MAX_NODE_SCORE * (high + low - s) // high)
    return out
