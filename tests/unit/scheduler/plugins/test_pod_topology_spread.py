"""PodTopologySpread against kube-scheduler v1.31's documented behaviour and the cases of its
plugin tests (podtopologyspread filtering_test.go, scoring_test.go), rebuilt here."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from gpuplane.api.taints import Taint
from gpuplane.api.topology_spread import LABEL_HOSTNAME, LABEL_ZONE, TopologySpreadConstraint
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.status import Code
from gpuplane.scheduler.framework.types import BoundPod, NominatedPod, PodInfo
from gpuplane.scheduler.plugins.podtopologyspread.plugin import REASON, REASON_MISSING_LABEL
from gpuplane.scheduler.plugins.podtopologyspread.scoring import IGNORED, go_round
from tests.unit.scheduler.factories import bound, make_pod, make_scheduler
from tests.unit.scheduler.plugins.helpers import plugin, state
from tests.unit.scheduler.plugins.spread_factories import exists, selector, spread, zoned

FOO = {"foo": ""}
SKEW = (REASON, Code.UNSCHEDULABLE)
MISSING = (REASON_MISSING_LABEL, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
Verdict = tuple[str, Code] | None


def verdicts(snap: ClusterSnapshot, pod: PodInfo) -> list[Verdict]:
    """Per node: None when it passes, else (reason, code); the vectorised Filter, its reasons
    and the per-node reference agree."""
    pts = plugin("PodTopologySpread")
    cs, st = state(snap)
    if pts.pre_filter(cs, pod, st).code is Code.SKIP:
        return [None] * st.num_nodes
    mask = pts.filter(cs, pod, st)
    out: list[Verdict] = []
    for i in range(st.num_nodes):
        ref = pts.filter_node(cs, pod, st, i)
        assert bool(mask[i]) == ref.ok
        out.append(None if ref.ok else (ref.message, ref.code))
    for group in pts.filter_reasons(cs, pod, st, np.flatnonzero(~mask)):
        assert all(out[int(i)] == (group.reason, group.code) for i in group.nodes)
    return out


def foo_on(*nodes: int, labels: dict[str, str] | None = None, prio: int = 0) -> list[BoundPod]:
    """Pods labelled ``foo`` (or ``labels``) bound on the nodes given, one per entry."""
    chosen = FOO if labels is None else labels
    return [bound(f"e{k}", f"n{i}", labels=chosen, prio=prio) for k, i in enumerate(nodes)]


def foo_pod(*constraints: TopologySpreadConstraint, **changes: Any) -> PodInfo:
    """A pod labelled ``foo`` with ``constraints`` (and any other PodInfo field changed)."""
    pod = make_pod("p", labels=FOO)
    return replace(pod, topology_spread_constraints=constraints, **changes)


ZONE_FOO = spread(LABEL_ZONE, 1, "DoNotSchedule", exists("foo"))


def test_skew_over_two_zones() -> None:
    # z1 holds 2 matching pods, z2 one: a third in z1 would make the skew 3 - 1 = 2 > 1.
    snap = zoned(["z1", "z1", "z2", "z2"], bound_pods=foo_on(0, 1, 3))
    assert verdicts(snap, foo_pod(ZONE_FOO)) == [SKEW, SKEW, None, None]
    relaxed = spread(LABEL_ZONE, 2, "DoNotSchedule", exists("foo"))
    assert verdicts(snap, foo_pod(relaxed)) == [None] * 4


def test_a_pod_its_selector_does_not_match_adds_no_skew() -> None:
    snap = zoned(["z1", "z2"], bound_pods=foo_on(0))
    pod = foo_pod(spread(LABEL_ZONE, 1, "DoNotSchedule", exists("bar")))
    assert verdicts(snap, pod) == [None, None]  # 0 + 0 - 0 everywhere


def test_min_domains_treats_the_global_minimum_as_zero() -> None:
    # One matching pod in each of two zones: with minDomains 3 only two domains exist, so the
    # global minimum is 0 and every node has skew 1 + 1 - 0 = 2 > 1.
    snap = zoned(["z1", "z2"], bound_pods=foo_on(0, 1))
    three = spread(LABEL_ZONE, 1, "DoNotSchedule", exists("foo"), min_domains=3)
    assert verdicts(snap, foo_pod(three)) == [SKEW, SKEW]
    two = spread(LABEL_ZONE, 1, "DoNotSchedule", exists("foo"), min_domains=2)
    assert verdicts(snap, foo_pod(two)) == [None, None]


def test_nodes_lacking_the_key_fail_and_are_not_counted() -> None:
    # n1 has no zone: it fails with the "missing required label" reason, and its three pods
    # count nowhere.
    snap = zoned(["z1", None, "z2"], bound_pods=foo_on(1, 1, 1))
    assert verdicts(snap, foo_pod(ZONE_FOO)) == [None, MISSING, None]


def test_the_first_failing_constraint_decides() -> None:
    # Only nodes with both keys count: n1 (z1, r1) with 2 pods and n2 (z2, r2). n0 (z1, no
    # rack) fails the zone skew 2 + 1 - 0 before its missing rack is looked at; n3 has no zone.
    racks = {1: {"rack": "r1"}, 2: {"rack": "r2"}}
    snap = zoned(["z1", "z1", "z2", None], bound_pods=foo_on(1, 1), extra=racks)
    rack = spread("rack", 1, "DoNotSchedule", exists("foo"))
    assert verdicts(snap, foo_pod(ZONE_FOO, rack)) == [SKEW, SKEW, None, MISSING]
    assert verdicts(snap, foo_pod(rack, ZONE_FOO)) == [MISSING, SKEW, None, MISSING]


def test_node_affinity_policy_honor_counts_only_matching_nodes() -> None:
    # n0 (z1, pool a) holds one pod, n1 (z2, pool b) none. The pod only goes to pool a: Honor
    # (the default) counts z1 alone (skew 1 + 1 - 1); Ignore also counts z2 (skew 1 + 1 - 0).
    extra = {0: {"pool": "a"}, 1: {"pool": "b"}}
    snap = zoned(["z1", "z2"], bound_pods=foo_on(0), extra=extra)
    honor = foo_pod(ZONE_FOO, node_selector={"pool": "a"})
    assert verdicts(snap, honor)[0] is None
    ignore = spread(LABEL_ZONE, 1, "DoNotSchedule", exists("foo"), node_affinity_policy="Ignore")
    assert verdicts(snap, foo_pod(ignore, node_selector={"pool": "a"}))[0] == SKEW


def test_node_taints_policy_honor_leaves_out_untolerated_nodes() -> None:
    taint = Taint("dedicated", "x", "NoSchedule")
    snap = zoned(["z1", "z2"], bound_pods=foo_on(0), taints={1: [taint]})
    assert verdicts(snap, foo_pod(ZONE_FOO))[0] == SKEW  # Ignore: z2's 0 is the minimum
    honor = spread(LABEL_ZONE, 1, "DoNotSchedule", exists("foo"), node_taints_policy="Honor")
    assert verdicts(snap, foo_pod(honor))[0] is None


def test_match_label_keys_count_only_the_pods_sharing_the_values() -> None:
    old = {"foo": "", "rev": "1"}
    snap = zoned(["z1", "z2"], bound_pods=foo_on(0, 0, labels=old))
    plain = foo_pod(ZONE_FOO, labels={"foo": "", "rev": "2"})
    assert verdicts(snap, plain) == [SKEW, None]
    keyed = spread(LABEL_ZONE, 1, "DoNotSchedule", exists("foo"), match_label_keys=("rev",))
    assert verdicts(snap, foo_pod(keyed, labels={"foo": "", "rev": "2"})) == [None, None]


def test_empty_selector_counts_no_existing_pod() -> None:
    # v1.31's countPodsMatchSelector returns 0 for an empty selector ({}), yet the pod matches it.
    snap = zoned(["z1", "z2"], bound_pods=foo_on(0, 0, 0))
    pod = foo_pod(spread(LABEL_ZONE, 1, "DoNotSchedule", selector()))
    assert verdicts(snap, pod) == [None, None]


def test_terminating_and_other_namespaces_pods_do_not_count() -> None:
    gone = [bound(f"t{k}", "n0", labels=FOO, terminating=True) for k in range(3)]
    elsewhere = [bound(f"o{k}", "n0", labels=FOO, namespace="other") for k in range(3)]
    snap = zoned(["z1", "z2"], bound_pods=gone + elsewhere)
    assert verdicts(snap, foo_pod(ZONE_FOO)) == [None, None]


def test_schedule_anyway_constraints_do_not_filter() -> None:
    snap = zoned(["z1", "z2"], bound_pods=foo_on(0, 0, 0))
    soft = spread(LABEL_ZONE, 1, "ScheduleAnyway", exists("foo"))
    pts = plugin("PodTopologySpread")
    cs, st = state(snap)
    assert pts.pre_filter(cs, foo_pod(soft), st).code is Code.SKIP


def test_pods_assumed_in_the_same_decision_count() -> None:
    snap = zoned(["z1", "z2"])
    host = spread(LABEL_HOSTNAME, 1, "DoNotSchedule", exists("foo"))
    pods = [foo_pod(host, uid=f"p{k}", name=f"p{k}") for k in range(6)]
    decision = make_scheduler().decide(snap, pods)
    nodes = [b.node for b in decision.bindings]
    assert sorted(nodes) == ["n0", "n0", "n0", "n1", "n1", "n1"]


def test_fit_error_over_skew_and_missing_label() -> None:
    snap = zoned(["z1", "z2", None], bound_pods=foo_on(0, 1))
    three = spread(LABEL_ZONE, 1, "DoNotSchedule", exists("foo"), min_domains=3)
    [failed] = make_scheduler().decide(snap, [foo_pod(three)]).unschedulable
    assert failed.message == (
        "0/3 nodes are available: 1 node(s) didn't match pod topology spread constraints "
        "(missing required label), 2 node(s) didn't match pod topology spread constraints. "
        "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
        "2 No preemption victims found for incoming pod."
    )


def test_preemption_removes_only_the_pods_that_break_the_skew() -> None:
    # n1 (z2) is cordoned but counted: z2's 0 is the minimum. On n0 two low-priority pods make
    # the skew 2 + 1 - 0 = 3 > 2; evicting one brings it to 2.
    snap = zoned(["z1", "z2"], bound_pods=foo_on(0, 0), cordoned=[1])
    pod = foo_pod(spread(LABEL_ZONE, 2, "DoNotSchedule", exists("foo")), priority=100)
    [pre] = make_scheduler().decide(snap, [pod]).preemptions
    assert pre.node == "n0" and len(pre.victims) == 1


def test_a_nominated_pod_counts_on_its_node() -> None:
    snap = zoned(["z1", "z2"])
    host = spread(LABEL_HOSTNAME, 1, "DoNotSchedule", exists("foo"))
    pts = plugin("PodTopologySpread")
    cs, st = state(snap)
    pod = foo_pod(host)
    pts.pre_filter(cs, pod, st)
    other = make_pod("nominated", labels=FOO, prio=10)
    st.track_moves = True  # as the framework sets it for a cycle these plugins filter
    st.add_nominated(0, other, 1)
    mask = pts.filter(cs, pod, st)
    assert mask is not None and mask.tolist() == [False, True]
    assert not pts.filter_node(cs, pod, st, 0).ok
    st.add_nominated(0, other, -1)
    assert pts.filter_node(cs, pod, st, 0).ok
    decision = make_scheduler().decide(
        zoned(["z1", "z2"], nominated=[NominatedPod(other, "n0")]), [pod]
    )
    assert [b.node for b in decision.bindings] == ["n1"]


# ----- scoring -----

RS = selector(app="web", **{"pod-template-hash": "h1"})
RS_LABELS = {"app": "web", "pod-template-hash": "h1"}


def rs_pod(uid: str = "p") -> PodInfo:
    return make_pod(uid, labels=RS_LABELS, default_selector=RS)


def raw_and_normalized(
    snap: ClusterSnapshot, pod: PodInfo, nodes: list[int]
) -> tuple[list[int], list[int]]:
    pts = plugin("PodTopologySpread")
    cs, st = state(snap)
    idx = np.array(nodes, dtype=np.int64)
    assert pts.pre_score(cs, pod, st, idx).ok
    raw = pts.score(cs, pod, st, idx)
    assert raw.tolist() == [pts.score_node(cs, pod, st, i) for i in nodes]
    norm = pts.normalize(raw)
    assert norm.tolist() == pts.normalize_reference(raw.tolist())
    return raw.tolist(), norm.tolist()


def test_system_default_scores_by_hand() -> None:
    # Nodes n0, n1 in zone a, n2 in zone b; the ReplicaSet has 2 pods on n0, 1 on n2.
    # hostname (maxSkew 3): 3 nodes, weight ln(3 + 2); zone (maxSkew 5): 2 zones, weight ln(4).
    # n0: 2 ln5 + 2 + 2 ln4 + 4 = 11.99 -> 12; n1: 0 + 2 + 2 ln4 + 4 = 8.77 -> 9;
    # n2: ln5 + 2 + ln4 + 4 = 9.00 -> 9. Normalized 100 (12 + 9 - s) / 12: 75, 100, 100.
    pods = [bound(f"r{k}", node, labels=RS_LABELS) for k, node in enumerate(["n0", "n0", "n2"])]
    snap = zoned(["a", "a", "b"], bound_pods=pods)
    raw, norm = raw_and_normalized(snap, rs_pod(), [0, 1, 2])
    ln5, ln4 = math.log(5), math.log(4)
    assert raw == [
        go_round(2 * ln5 + 2 + 2 * ln4 + 4),
        go_round(2 + 2 * ln4 + 4),
        go_round(ln5 + 2 + ln4 + 4),
    ]
    assert raw == [12, 9, 9]
    assert norm == [75, 100, 100]


def test_system_defaults_spare_nodes_without_a_zone() -> None:
    # With System defaults a node lacking the zone still scores by hostname (not ignored).
    pods = [bound("r0", "n0", labels=RS_LABELS)]
    raw, norm = raw_and_normalized(zoned([None, None], bound_pods=pods), rs_pod(), [0, 1])
    # hostname weight ln(4): n0 1 * ln4 + 2 = 3.39 -> 3, n1 2; zone absent on both.
    assert raw == [3, 2]
    assert norm == [66, 100]


def test_own_constraints_ignore_nodes_lacking_a_key() -> None:
    soft = spread(LABEL_ZONE, 1, "ScheduleAnyway", exists("foo"))
    snap = zoned(["z1", None, "z2"], bound_pods=foo_on(0))
    raw, norm = raw_and_normalized(snap, foo_pod(soft), [0, 1, 2])
    # 2 zones, weight ln4: z1 1 * ln4 + 0 = 1.39 -> 1, z2 0; n1 ignored.
    assert raw == [1, IGNORED, 0]
    assert norm == [0, 0, 100]


def test_no_existing_pods_score_100_everywhere() -> None:
    _raw, norm = raw_and_normalized(zoned(["a", "b"]), rs_pod(), [0, 1])
    assert norm == [100, 100]


def test_pods_without_constraints_or_selector_skip() -> None:
    pts = plugin("PodTopologySpread")
    cs, st = state(zoned(["a", "b"]))
    plain = make_pod("p", labels=RS_LABELS)
    assert pts.pre_filter(cs, plain, st).code is Code.SKIP
    assert pts.pre_score(cs, plain, st, np.array([0, 1])).code is Code.SKIP
    empty = make_pod("q", labels=RS_LABELS, default_selector=selector())
    assert pts.pre_score(cs, empty, st, np.array([0, 1])).code is Code.SKIP


def test_system_defaults_spread_a_replica_set_over_hostnames() -> None:
    # Four identical nodes, four replicas in one decision: one per node, as hostname spreading
    # (maxSkew 3, ScheduleAnyway) prefers the node with the fewest replicas.
    snap = zoned(["a", "a", "a", "a"])
    pods = [rs_pod(f"p{k}") for k in range(4)]
    decision = make_scheduler().decide(snap, pods)
    assert sorted(b.node for b in decision.bindings) == ["n0", "n1", "n2", "n3"]
