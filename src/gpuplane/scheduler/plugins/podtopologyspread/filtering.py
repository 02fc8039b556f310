"""PodTopologySpread's PreFilter state and Filter rule (kube-scheduler v1.31
framework/plugins/podtopologyspread/filtering.go), over node columns.

PreFilter, once per pod: for each DoNotSchedule constraint, the matching pods (same namespace,
not terminating) on every node it counts, summed per topology domain; the domains some counted
node is in; the least count among them (the critical path).

Filter, node ``n`` in domain ``d`` of each constraint in order: a node without the topology key
fails at once, ``node(s) didn't match pod topology spread constraints (missing required label)``
(UnschedulableAndUnresolvable); else ``count(d) + selfMatch - globalMin > maxSkew`` fails with
``node(s) didn't match pod topology spread constraints`` (Unschedulable: preemption may help).
``globalMin`` is 0 while fewer domains than ``minDomains`` are counted, else the least count.

A pod added on node ``n`` for one filter run (a nominated pod) or taken off it (preemption's dry
run) changes ``count(d)`` when ``n`` is a counted node (AddPod/RemovePod); the minimum is then
the smaller of that count and the least count of the other domains, which is what kube's two
critical paths give when one domain changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from gpuplane.scheduler.framework.pod_counts import matching_per_node
from gpuplane.scheduler.framework.state import ClusterState
from gpuplane.scheduler.framework.types import BoolArray, BoundPod, IntArray, PodInfo
from gpuplane.scheduler.plugins.podtopologyspread.constraints import (
    InclusionCache,
    SpreadConstraint,
)
from gpuplane.scheduler.plugins.topology_domains import DomainCache, KeyDomains

PASS, SKEW, MISSING_LABEL = 0, 1, 2
_NONE = 2**62  # the least count when no domain is counted


@dataclass(frozen=True, slots=True)
class ConstraintCounts:
    """One constraint's counts, per domain of its topology key."""

    constraint: SpreadConstraint
    domains: KeyDomains
    counted: BoolArray  # per node: the constraint counts it
    counts: IntArray  # per domain: matching pods on counted nodes
    num_domains: int
    min_count: int
    min_domain: int  # a domain holding min_count (-1: no domain counted)
    other_min: int  # the least count of the domains other than min_domain
    self_match: int

    def global_min(self) -> int:
        return 0 if self.num_domains < self.constraint.min_domains else self.min_count

    def global_min_with(self, d: int, count: int) -> int:
        """The minimum once counted domain ``d`` holds ``count``."""
        if self.num_domains < self.constraint.min_domains:
            return 0
        return min(count, self.other_min if d == self.min_domain else self.min_count)


@dataclass(frozen=True, slots=True)
class SpreadFilterState:
    namespace: str
    constraints: tuple[ConstraintCounts, ...]


def _least_two(counts: IntArray, present: BoolArray) -> tuple[int, int, int]:
    """(least count, a domain holding it, the least count of the other domains)."""
    domains = np.flatnonzero(present)
    if domains.size == 0:
        return _NONE, -1, _NONE
    values = counts[domains]
    k = int(np.argmin(values))
    rest = np.delete(values, k)
    return int(values[k]), int(domains[k]), int(rest.min()) if rest.size else _NONE


def constraint_counts(
    st: ClusterState,
    pod: PodInfo,
    c: SpreadConstraint,
    domains: KeyDomains,
    counted: BoolArray,
) -> ConstraintCounts:
    if c.counts_pods():
        assert c.selector is not None
        pods = matching_per_node(st, pod.namespace, c.selector, skip_terminating=True)
    else:
        pods = np.zeros(st.num_nodes, dtype=np.int64)
    ids = domains.ids[counted]
    size = domains.num_domains
    counts = np.bincount(ids, weights=pods[counted], minlength=size).astype(np.int64)
    present = np.bincount(ids, minlength=size) > 0
    least, where, other = _least_two(counts, present)
    return ConstraintCounts(
        constraint=c,
        domains=domains,
        counted=counted,
        counts=counts,
        num_domains=int(np.count_nonzero(present)),
        min_count=least,
        min_domain=where,
        other_min=other,
        self_match=int(c.self_match(pod)),
    )


def pre_filter_state(
    st: ClusterState,
    pod: PodInfo,
    constraints: tuple[SpreadConstraint, ...],
    domain_cache: DomainCache,
    inclusion: InclusionCache,
) -> SpreadFilterState:
    all_keys = inclusion.all_keys(st.snap, constraints)
    out = []
    for c in constraints:
        domains = domain_cache.get(st.snap, c.topology_key)
        counted = all_keys & inclusion.included(st.snap, pod, c)
        out.append(constraint_counts(st, pod, c, domains, counted))
    return SpreadFilterState(pod.namespace, tuple(out))


def filter_codes(state: SpreadFilterState, num_nodes: int) -> IntArray:
    """PASS, SKEW or MISSING_LABEL for every node, the first failing constraint deciding."""
    codes = np.zeros(num_nodes, dtype=np.int64)
    undecided = np.ones(codes.size, dtype=bool)
    for cc in state.constraints:
        missing = undecided & ~cc.domains.present
        codes[missing] = MISSING_LABEL
        undecided &= ~missing
        skew = cc.counts[cc.domains.ids] + cc.self_match - cc.global_min()
        bad = undecided & (skew > cc.constraint.max_skew)
        codes[bad] = SKEW
        undecided &= ~bad
    return codes


def _moved(
    c: SpreadConstraint,
    namespace: str,
    added: Iterable[PodInfo],
    removed: Iterable[BoundPod],
) -> int:
    return sum(c.counts_moved(namespace, p) for p in added) - sum(
        c.counts_moved(namespace, p) for p in removed
    )


def node_code(state: SpreadFilterState, st: ClusterState, i: int) -> int:
    """The rule on node ``i`` alone, with the pods added to or taken off it for this run."""
    added = st.added_on(i)
    removed = st.removed_on(i)
    for cc in state.constraints:
        if not cc.domains.present[i]:
            return MISSING_LABEL
        d = int(cc.domains.ids[i])
        count = int(cc.counts[d])
        least = cc.global_min()
        if (added or removed) and cc.counted[i]:
            count += _moved(cc.constraint, state.namespace, added, removed)
            least = cc.global_min_with(d, count)
        if count + cc.self_match - least > cc.constraint.max_skew:
            return SKEW
    return PASS
