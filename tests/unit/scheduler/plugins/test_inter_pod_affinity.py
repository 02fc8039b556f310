"""InterPodAffinity against kube-scheduler v1.31's documented behaviour and the cases of its
plugin tests (interpodaffinity filtering_test.go, scoring_test.go), rebuilt here."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from gpuplane.api.topology_spread import LABEL_HOSTNAME, LABEL_ZONE
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.status import Code
from gpuplane.scheduler.framework.types import BoundPod, NominatedPod, PodInfo
from gpuplane.scheduler.plugins.interpodaffinity.plugin import (
    REASON_AFFINITY,
    REASON_ANTI_AFFINITY,
    REASON_EXISTING,
)
from tests.unit.scheduler.factories import bound, make_pod, make_scheduler
from tests.unit.scheduler.plugins.helpers import plugin, state
from tests.unit.scheduler.plugins.spread_factories import (
    affinity,
    anti_affinity,
    preferred,
    zoned,
)

AFF = (REASON_AFFINITY, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
ANTI = (REASON_ANTI_AFFINITY, Code.UNSCHEDULABLE)
EXISTING = (REASON_EXISTING, Code.UNSCHEDULABLE)
Verdict = tuple[str, Code] | None
WEB = {"app": "web"}


def verdicts(snap: ClusterSnapshot, pod: PodInfo) -> list[Verdict]:
    """Per node: None when it passes, else (reason, code); fast path, reasons and reference
    agree."""
    ipa = plugin("InterPodAffinity")
    cs, st = state(snap)
    if ipa.pre_filter(cs, pod, st).code is Code.SKIP:
        return [None] * st.num_nodes
    mask = ipa.filter(cs, pod, st)
    out: list[Verdict] = []
    for i in range(st.num_nodes):
        ref = ipa.filter_node(cs, pod, st, i)
        assert bool(mask[i]) == ref.ok
        out.append(None if ref.ok else (ref.message, ref.code))
    for group in ipa.filter_reasons(cs, pod, st, np.flatnonzero(~mask)):
        assert all(out[int(i)] == (group.reason, group.code) for i in group.nodes)
    return out


def pod(
    uid: str = "p",
    labels: Mapping[str, str] | None = None,
    aff: Mapping[str, object] | None = None,
    prio: int = 0,
    namespace: str = "ns",
) -> PodInfo:
    return make_pod(uid, labels=labels, affinity=aff, prio=prio, namespace=namespace)


def on(node: str, uid: str, labels: Mapping[str, str], **kw: object) -> BoundPod:
    aff = kw.get("aff")
    prio = kw.get("prio", 0)
    assert aff is None or isinstance(aff, Mapping)
    assert isinstance(prio, int)
    return bound(uid, node, labels=labels, affinity=aff, prio=prio)


def test_required_anti_affinity_by_hostname_keeps_replicas_apart() -> None:
    snap = zoned(["a", "a", "b"], bound_pods=[on("n0", "w0", WEB)])
    replica = pod(labels=WEB, aff=anti_affinity(LABEL_HOSTNAME, app="web"))
    assert verdicts(snap, replica) == [ANTI, None, None]
    by_zone = pod(labels=WEB, aff=anti_affinity(LABEL_ZONE, app="web"))
    assert verdicts(snap, by_zone) == [ANTI, ANTI, None]


def test_replicas_with_anti_affinity_land_on_distinct_nodes() -> None:
    snap = zoned(["a", "a", "b"])
    rule = anti_affinity(LABEL_HOSTNAME, app="web")
    pods = [pod(f"w{k}", WEB, rule) for k in range(4)]
    decision = make_scheduler().decide(snap, pods)
    assert sorted(b.node for b in decision.bindings) == ["n0", "n1", "n2"]
    [failed] = decision.unschedulable
    assert failed.message == (
        "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. preemption: "
        "0/3 nodes are available: 3 No preemption victims found for incoming pod."
    )


def test_existing_pods_anti_affinity_rejects_the_newcomer() -> None:
    guard = on("n0", "g", {"app": "cache"}, aff=anti_affinity(LABEL_ZONE, app="db"))
    snap = zoned(["a", "a", "b"], bound_pods=[guard])
    assert verdicts(snap, pod(labels={"app": "db"})) == [EXISTING, EXISTING, None]
    assert verdicts(snap, pod(labels={"app": "web"})) == [None, None, None]
    # The guard's term names its own namespace: a db pod elsewhere is not concerned.
    assert verdicts(snap, pod(labels={"app": "db"}, namespace="other")) == [None, None, None]


def test_self_affinity_lets_the_first_pod_of_a_group_in() -> None:
    rule = affinity(LABEL_ZONE, app="cache")
    snap = zoned(["a", None, "b"])
    assert verdicts(snap, pod(labels={"app": "cache"}, aff=rule)) == [None, AFF, None]
    # Not matching its own term, the first pod has nothing to follow.
    assert verdicts(snap, pod(labels={"app": "web"}, aff=rule)) == [AFF, AFF, AFF]
    # Once one cache pod runs in zone b, the others follow it there.
    placed = zoned(["a", None, "b"], bound_pods=[on("n2", "c0", {"app": "cache"})])
    assert verdicts(placed, pod(labels={"app": "cache"}, aff=rule)) == [AFF, AFF, None]


def test_affinity_failures_are_unresolvable_for_preemption() -> None:
    snap = zoned(["a", "b"], bound_pods=[on("n0", "x", WEB)])
    lonely = pod(labels=WEB, aff=affinity(LABEL_ZONE, app="db"), prio=100)
    [failed] = make_scheduler().decide(snap, [lonely]).unschedulable
    assert failed.message == (
        "0/2 nodes are available: 2 node(s) didn't match pod affinity rules. preemption: "
        "0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_preemption_evicts_the_pod_whose_anti_affinity_blocks() -> None:
    guard = on("n0", "g", {"app": "batch"}, aff=anti_affinity(LABEL_HOSTNAME, app="web"))
    snap = zoned(["a"], bound_pods=[guard])
    urgent = pod(labels=WEB, prio=100)
    [pre] = make_scheduler().decide(snap, [urgent]).preemptions
    assert (pre.node, pre.victims) == ("n0", ("g",))


def test_a_nominated_pod_counts_for_anti_affinity() -> None:
    snap = zoned(["a", "b"])
    ipa = plugin("InterPodAffinity")
    cs, st = state(snap)
    replica = pod(labels=WEB, aff=anti_affinity(LABEL_HOSTNAME, app="web"))
    assert ipa.pre_filter(cs, replica, st).ok
    st.track_moves = True  # as the framework sets it for a cycle these plugins filter
    st.add_nominated(0, pod("nominated", WEB, prio=5), 1)
    mask = ipa.filter(cs, replica, st)
    assert mask is not None and mask.tolist() == [False, True]


def test_namespace_selector_reads_the_snapshots_namespace_labels() -> None:
    term = {
        "labelSelector": {"matchLabels": WEB},
        "namespaceSelector": {"matchLabels": {"team": "a"}},
        "topologyKey": LABEL_HOSTNAME,
    }
    rule = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    pods = [bound("w", "n0", labels=WEB, namespace="team-a")]
    newcomer = pod(labels=WEB, aff=rule)
    # Namespace labels unknown: the non-empty namespaceSelector selects no namespace.
    assert verdicts(zoned(["a", "b"], bound_pods=pods), newcomer) == [None, None]
    known = {"team-a": {"team": "a"}, "team-b": {"team": "b"}}
    snap = zoned(["a", "b"], bound_pods=pods, namespace_labels=known)
    assert verdicts(snap, newcomer) == [ANTI, None]
    # {} selects every namespace.
    term["namespaceSelector"] = {}
    assert verdicts(zoned(["a", "b"], bound_pods=pods), newcomer) == [ANTI, None]


# ----- scoring -----


def raw_and_normalized(
    snap: ClusterSnapshot, incoming: PodInfo, nodes: list[int], **args: object
) -> tuple[list[int], list[int]] | None:
    data = {"pluginConfig": [{"name": "InterPodAffinity", "args": args}]} if args else None
    ipa = plugin("InterPodAffinity", data)
    cs, st = state(snap)
    idx = np.array(nodes, dtype=np.int64)
    if ipa.pre_score(cs, incoming, st, idx).code is Code.SKIP:
        return None
    raw = ipa.score(cs, incoming, st, idx)
    assert raw.tolist() == [ipa.score_node(cs, incoming, st, i) for i in nodes]
    norm = ipa.normalize(raw)
    assert norm.tolist() == ipa.normalize_reference(raw.tolist())
    return raw.tolist(), norm.tolist()


def test_preferred_affinity_and_anti_affinity_scores() -> None:
    # db pods: n0 (zone a) and n2 (zone b); cache pod on n3 (zone c).
    pods = [on("n0", "d0", {"app": "db"}), on("n2", "d1", {"app": "db"})]
    pods.append(on("n3", "c0", {"app": "cache"}))
    snap = zoned(["a", "a", "b", "c"], bound_pods=pods)
    rules = {
        **preferred("podAffinity", 10, LABEL_ZONE, app="db"),
        **preferred("podAntiAffinity", 4, LABEL_HOSTNAME, app="db"),
    }
    result = raw_and_normalized(snap, pod(labels=WEB, aff=rules), [0, 1, 2, 3])
    # zone a +10 (one db pod), zone b +10; hostnames n0 and n2 -4.
    assert result == ([6, 10, 6, 0], [60, 100, 60, 0])


def test_existing_pods_required_and_preferred_terms_score_the_newcomer() -> None:
    follower = on("n0", "f", {"app": "x"}, aff=affinity(LABEL_ZONE, app="web"))
    avoider = on(
        "n2", "a", {"app": "y"}, aff=preferred("podAntiAffinity", 7, LABEL_ZONE, app="web")
    )
    snap = zoned(["a", "a", "b"], bound_pods=[follower, avoider])
    newcomer = pod(labels=WEB)
    # hardPodAffinityWeight 1 for zone a; -7 for zone b.
    assert raw_and_normalized(snap, newcomer, [0, 1, 2]) == ([1, 1, -7], [100, 100, 0])
    assert raw_and_normalized(snap, newcomer, [0, 1, 2], hardPodAffinityWeight=0) == (
        [0, 0, -7],
        [100, 100, 0],
    )
    skipped = raw_and_normalized(snap, newcomer, [0, 1, 2], ignorePreferredTermsOfExistingPods=True)
    assert skipped is None


def test_nothing_to_score_skips() -> None:
    snap = zoned(["a", "b"], bound_pods=[on("n0", "w", WEB)])
    assert raw_and_normalized(snap, pod(labels=WEB), [0, 1]) is None
    ipa = plugin("InterPodAffinity")
    cs, st = state(snap)
    assert ipa.pre_filter(cs, pod(labels=WEB), st).code is Code.SKIP


def test_preferred_affinity_steers_the_choice() -> None:
    snap = zoned(["a", "b", "b"], bound_pods=[on("n0", "d", {"app": "db"})])
    near_db = pod(labels=WEB, aff=preferred("podAffinity", 100, LABEL_ZONE, app="db"))
    [binding] = make_scheduler().decide(snap, [near_db]).bindings
    assert binding.node == "n0"


def test_an_identical_pod_is_retried_once_its_affinity_can_be_met() -> None:
    # p0 fails (no db pod yet); the db pod binds; p1, identical to p0, must get its own cycle.
    snap = zoned(["a", "b"])
    rule = affinity(LABEL_ZONE, app="db")
    pods = [pod("p0", WEB, rule), pod("db", {"app": "db"}), pod("p1", WEB, rule)]
    decision = make_scheduler().decide(snap, pods)
    nodes = {b.pod_uid: b.node for b in decision.bindings}
    assert [u.pod_uid for u in decision.unschedulable] == ["p0"]
    assert nodes["p1"] == nodes["db"]


def test_a_node_that_fits_only_with_a_nominated_pod_reports_the_failure_without_it() -> None:
    # The db pod is only nominated to n0: with it counted n0 passes, without it n0 fails; kube
    # requires both, and reports the failure seen without it.
    db = pod("db", {"app": "db"}, prio=10)
    snap = zoned(["a", "b"], nominated=[NominatedPod(db, "n0")])
    follower = pod("f", WEB, affinity(LABEL_ZONE, app="db"))
    for reference in (False, True):
        [failed] = make_scheduler(reference=reference).decide(snap, [follower]).unschedulable
        assert failed.message == (
            "0/2 nodes are available: 2 node(s) didn't match pod affinity rules. preemption: "
            "0/2 nodes are available: 2 Preemption is not helpful for scheduling."
        )
