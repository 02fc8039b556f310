"""PodTopologySpread's Filter and Score against a from-scratch transcription of kube-scheduler
v1.31's rules (pod by pod, node by node, as filtering.go and scoring.go loop) on random clusters."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.api.taints import Taint, first_untolerated
from gpuplane.api.topology_spread import LABEL_HOSTNAME, LABEL_ZONE
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.status import Code
from gpuplane.scheduler.framework.types import BoundPod, PodInfo
from gpuplane.scheduler.plugins.podtopologyspread.constraints import (
    SYSTEM_DEFAULT_CONSTRAINTS,
    SpreadConstraint,
    pod_constraints,
)
from gpuplane.scheduler.plugins.podtopologyspread.scoring import go_round
from tests.unit.scheduler.factories import bound, make_pod
from tests.unit.scheduler.plugins.helpers import plugin, state
from tests.unit.scheduler.plugins.spread_factories import exists, selector, spread, zoned

TAINT = Taint("dedicated", "x", "NoSchedule")
HARD_EFFECTS = frozenset({"NoSchedule", "NoExecute"})
CODES = {Code.SUCCESS: 0, Code.UNSCHEDULABLE: 1, Code.UNSCHEDULABLE_AND_UNRESOLVABLE: 2}


def counted(
    snap: ClusterSnapshot, pod: PodInfo, cs: list[SpreadConstraint], c: SpreadConstraint, i: int
) -> bool:
    labels = snap.node_labels[i]
    if not all(x.topology_key in labels for x in cs):
        return False
    if c.honor_node_affinity and not all(labels.get(k) == v for k, v in pod.node_selector.items()):
        return False
    untolerated = first_untolerated(snap.node_taints[i], pod.tolerations, HARD_EFFECTS)
    return not (c.honor_node_taints and untolerated is not None)


def matching_on(snap: ClusterSnapshot, pod: PodInfo, c: SpreadConstraint, node: str) -> int:
    if c.selector is None or c.selector.is_empty:
        return 0
    return sum(
        1
        for p in snap.bound_pods.values()
        if p.node == node
        and p.namespace == pod.namespace
        and not p.terminating
        and c.selector.matches(p.labels)
    )


def brute_filter(snap: ClusterSnapshot, pod: PodInfo) -> list[int]:
    cs = list(pod_constraints(pod, SYSTEM_DEFAULT_CONSTRAINTS, "DoNotSchedule"))
    out = []
    for labels in snap.node_labels:
        verdict = 0
        for c in cs:
            counts: dict[str, int] = {}
            for j, name in enumerate(snap.node_names):
                if counted(snap, pod, cs, c, j):
                    v = snap.node_labels[j][c.topology_key]
                    counts[v] = counts.get(v, 0) + matching_on(snap, pod, c, name)
            if c.topology_key not in labels:
                verdict = 2
                break
            least = 0 if len(counts) < c.min_domains else min(counts.values(), default=0)
            own = 1 if c.selector is not None and c.selector.matches(pod.labels) else 0
            if counts.get(labels[c.topology_key], 0) + own - least > c.max_skew:
                verdict = 1
                break
        out.append(verdict)
    return out


def brute_scores(snap: ClusterSnapshot, pod: PodInfo, nodes: list[int]) -> list[int]:
    cs = list(pod_constraints(pod, SYSTEM_DEFAULT_CONSTRAINTS, "ScheduleAnyway"))
    require_all = bool(pod.topology_spread_constraints)
    keys = [c.topology_key for c in cs]
    ignored = {i for i in nodes if require_all and not all(k in snap.node_labels[i] for k in keys)}
    raw = []
    for i in nodes:
        if i in ignored:
            raw.append(-1)
            continue
        total = 0.0
        for c in cs:
            labels = snap.node_labels[i]
            if c.topology_key not in labels:
                continue
            kept = [j for j in nodes if j not in ignored]
            if c.topology_key == LABEL_HOSTNAME:
                size = len(kept)
                count = matching_on(snap, pod, c, snap.node_names[i])
            else:
                pairs = {snap.node_labels[j].get(c.topology_key, "") for j in kept}
                size = len(pairs)
                count = sum(
                    matching_on(snap, pod, c, snap.node_names[j])
                    for j in range(snap.num_nodes)
                    if (not require_all or all(k in snap.node_labels[j] for k in keys))
                    and counted(snap, pod, [], c, j)
                    and snap.node_labels[j].get(c.topology_key, "") == labels[c.topology_key]
                )
            total += float(count) * math.log(size + 2) + float(c.max_skew - 1)
        raw.append(go_round(total))
    return raw


@st.composite
def cases(draw: Any) -> tuple[ClusterSnapshot, PodInfo]:
    n = draw(st.integers(1, 8))
    zones = [draw(st.sampled_from(["a", "b", "c", None])) for _ in range(n)]
    pods: list[BoundPod] = []
    for i in range(n):
        for k in range(draw(st.integers(0, 4))):
            pods.append(
                bound(
                    f"b{i}-{k}",
                    f"n{i}",
                    labels={"app": draw(st.sampled_from(["web", "db"]))},
                    namespace=draw(st.sampled_from(["ns", "ns", "other"])),
                    terminating=draw(st.integers(0, 6)) == 0,
                )
            )
    extra = {i: {"pool": draw(st.sampled_from(["x", "y"]))} for i in range(n)}
    taints = {i: [TAINT] for i in range(n) if draw(st.integers(0, 4)) == 0}
    snap = zoned(zones, bound_pods=pods, extra=extra, taints=taints)
    constraints = tuple(
        spread(
            key,
            draw(st.integers(1, 3)),
            draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
            draw(st.sampled_from([selector(app="web"), exists("app"), selector(), None])),
            node_affinity_policy=draw(st.sampled_from([None, "Honor", "Ignore"])),
            node_taints_policy=draw(st.sampled_from([None, "Honor", "Ignore"])),
        )
        for key in draw(
            st.lists(st.sampled_from([LABEL_HOSTNAME, LABEL_ZONE, "pool"]), max_size=3, unique=True)
        )
    )
    pod = make_pod(
        "p",
        labels={"app": "web"},
        sel={"pool": "x"} if draw(st.booleans()) else None,
        spread=constraints,
        default_selector=selector(app="web") if draw(st.booleans()) else None,
    )
    return snap, pod


@settings(max_examples=300, deadline=None)
@given(case=cases())
def test_filter_and_score_match_the_rules_written_out(
    case: tuple[ClusterSnapshot, PodInfo],
) -> None:
    snap, pod = case
    pts = plugin("PodTopologySpread")
    cs, st_ = state(snap)
    expected = brute_filter(snap, pod)
    if pts.pre_filter(cs, pod, st_).code is Code.SKIP:
        assert expected == [0] * snap.num_nodes
    else:
        mask = pts.filter(cs, pod, st_)
        got = [CODES[pts.filter_node(cs, pod, st_, i).code] for i in range(snap.num_nodes)]
        assert got == expected
        assert mask.tolist() == [v == 0 for v in expected]
    nodes = list(range(snap.num_nodes))
    if pts.pre_score(cs, pod, st_, np.array(nodes)).code is Code.SKIP:
        assert not pod_constraints(pod, SYSTEM_DEFAULT_CONSTRAINTS, "ScheduleAnyway")
    else:
        assert pts.score(cs, pod, st_, np.array(nodes)).tolist() == brute_scores(snap, pod, nodes)
