"""InterPodAffinity's Filter and Score against a from-scratch transcription of kube-scheduler
v1.31's rules (every existing pod, every node, as filtering.go and scoring.go loop) on random
clusters."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.api.topology_spread import LABEL_HOSTNAME, LABEL_ZONE
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.status import Code
from gpuplane.scheduler.framework.types import BoundPod, PodInfo
from gpuplane.scheduler.plugins.interpodaffinity.terms import AffinityTerm, pod_terms
from tests.unit.scheduler.factories import bound, make_pod
from tests.unit.scheduler.plugins.helpers import plugin, state
from tests.unit.scheduler.plugins.spread_factories import (
    affinity,
    anti_affinity,
    preferred,
    zoned,
)
from tests.unit.scheduler.plugins.test_spread_affinity_fast_vs_reference import rules

Pair = tuple[str, str]


def node_of(snap: ClusterSnapshot, p: BoundPod) -> dict[str, str]:
    return dict(snap.node_labels[snap.node_names.index(p.node)])


def term_hits(t: AffinityTerm, p: BoundPod | PodInfo) -> bool:
    return t.matches(p.namespace, p.labels, None)


def brute_filter(snap: ClusterSnapshot, pod: PodInfo) -> list[int]:
    mine = pod_terms(pod.namespace, pod.labels, pod.affinity)
    existing: dict[Pair, int] = {}
    aff: dict[Pair, int] = {}
    anti: dict[Pair, int] = {}
    for p in snap.bound_pods.values():
        labels = node_of(snap, p)
        for t in pod_terms(p.namespace, p.labels, p.affinity).required_anti:
            if t.topology_key in labels and term_hits(t, pod):
                pair = (t.topology_key, labels[t.topology_key])
                existing[pair] = existing.get(pair, 0) + 1
        if mine.required_affinity and all(term_hits(t, p) for t in mine.required_affinity):
            for t in mine.required_affinity:
                if t.topology_key in labels:
                    pair = (t.topology_key, labels[t.topology_key])
                    aff[pair] = aff.get(pair, 0) + 1
        for t in mine.required_anti:
            if t.topology_key in labels and term_hits(t, p):
                pair = (t.topology_key, labels[t.topology_key])
                anti[pair] = anti.get(pair, 0) + 1
    self_match = bool(mine.required_affinity) and all(
        term_hits(t, pod) for t in mine.required_affinity
    )
    out = []
    for node_labels in snap.node_labels:
        labels = dict(node_labels)
        keys_ok = all(t.topology_key in labels for t in mine.required_affinity)
        found = all(
            aff.get((t.topology_key, labels.get(t.topology_key, "")), 0) > 0
            for t in mine.required_affinity
        )
        if not keys_ok or not (found or (not aff and self_match)):
            out.append(1)
        elif any(
            anti.get((t.topology_key, labels.get(t.topology_key, "\0")), 0) > 0
            for t in mine.required_anti
        ):
            out.append(2)
        elif any(existing.get(pair, 0) > 0 for pair in labels.items()):
            out.append(3)
        else:
            out.append(0)
    return out


def brute_scores(snap: ClusterSnapshot, pod: PodInfo) -> dict[str, dict[str, int]]:
    mine = pod_terms(pod.namespace, pod.labels, pod.affinity)
    score: dict[str, dict[str, int]] = {}

    def add(t: AffinityTerm, labels: dict[str, str], amount: int) -> None:
        if t.topology_key in labels:
            row = score.setdefault(t.topology_key, {})
            row[labels[t.topology_key]] = row.get(labels[t.topology_key], 0) + amount

    for p in snap.bound_pods.values():
        labels = node_of(snap, p)
        for t in mine.preferred_affinity:
            if term_hits(t, p):
                add(t, labels, t.weight)
        for t in mine.preferred_anti:
            if term_hits(t, p):
                add(t, labels, -t.weight)
        theirs = pod_terms(p.namespace, p.labels, p.affinity)
        for t in theirs.required_affinity:
            if term_hits(t, pod):
                add(t, labels, 1)
        for t in theirs.preferred_affinity:
            if term_hits(t, pod):
                add(t, labels, t.weight)
        for t in theirs.preferred_anti:
            if term_hits(t, pod):
                add(t, labels, -t.weight)
    return score


@st.composite
def cases(draw: Any) -> tuple[ClusterSnapshot, PodInfo]:
    n = draw(st.integers(1, 7))
    zones = [draw(st.sampled_from(["a", "b", None])) for _ in range(n)]
    pods = [
        bound(
            f"b{i}-{k}",
            f"n{i}",
            labels={"app": draw(st.sampled_from(["web", "db"]))},
            affinity=draw(rules()),
            namespace=draw(st.sampled_from(["ns", "ns", "other"])),
        )
        for i in range(n)
        for k in range(draw(st.integers(0, 3)))
    ]
    app = draw(st.sampled_from(["web", "db"]))
    return zoned(zones, bound_pods=pods), make_pod("p", labels={"app": app}, affinity=draw(rules()))


@settings(max_examples=300, deadline=None)
@given(case=cases())
def test_filter_and_score_match_the_rules_written_out(
    case: tuple[ClusterSnapshot, PodInfo],
) -> None:
    snap, pod = case
    ipa = plugin("InterPodAffinity")
    cs, st_ = state(snap)
    expected = brute_filter(snap, pod)
    if ipa.pre_filter(cs, pod, st_).code is Code.SKIP:
        assert expected == [0] * snap.num_nodes
    else:
        mask = ipa.filter(cs, pod, st_)
        assert mask.tolist() == [v == 0 for v in expected]
    nodes = np.arange(snap.num_nodes)
    table = brute_scores(snap, pod)
    if ipa.pre_score(cs, pod, st_, nodes).code is Code.SKIP:
        assert not table
    else:
        got = ipa.score(cs, pod, st_, nodes).tolist()
        want = [
            sum(row.get(labels[key], 0) for key, row in table.items() if key in labels)
            for labels in snap.node_labels
        ]
        assert got == want


def test_the_helpers_build_what_the_rules_read() -> None:
    # spread_factories' rules parse into the terms the transcription above reads.
    assert pod_terms("ns", {}, anti_affinity(LABEL_HOSTNAME, app="x")).required_anti
    assert pod_terms("ns", {}, affinity(LABEL_ZONE, app="x")).required_affinity
    assert pod_terms("ns", {}, preferred("podAffinity", 3, LABEL_ZONE, app="x")).preferred_affinity
