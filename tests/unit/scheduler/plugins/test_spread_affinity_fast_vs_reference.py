"""On random labelled clusters, the vectorised framework and the per-node reference decide alike
with PodTopologySpread and InterPodAffinity in play: bindings, failure messages, preemptions."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.api.topology_spread import LABEL_HOSTNAME, LABEL_ZONE
from gpuplane.scheduler.framework.decision import SchedulingDecision
from gpuplane.scheduler.framework.snapshot import ClusterSnapshot
from gpuplane.scheduler.framework.types import BoundPod, NominatedPod, PodInfo
from tests.unit.scheduler.factories import bound, make_pod, make_scheduler
from tests.unit.scheduler.plugins.spread_factories import (
    affinity,
    anti_affinity,
    exists,
    preferred,
    selector,
    spread,
    zoned,
)

APPS = ["web", "db"]
KEYS = [LABEL_HOSTNAME, LABEL_ZONE]


@st.composite
def rules(draw: Any) -> dict[str, object] | None:
    kind = draw(st.sampled_from(["none", "anti", "aff", "pref-aff", "pref-anti", "both"]))
    key, app = draw(st.sampled_from(KEYS)), draw(st.sampled_from(APPS))
    if kind == "none":
        return None
    if kind == "anti":
        return anti_affinity(key, app=app)
    if kind == "aff":
        return affinity(key, app=app)
    if kind == "both":
        return {**anti_affinity(key, app=app), **preferred("podAffinity", 5, LABEL_ZONE, app=app)}
    field = "podAffinity" if kind == "pref-aff" else "podAntiAffinity"
    return preferred(field, draw(st.integers(1, 100)), key, app=app)


@st.composite
def clusters(draw: Any) -> ClusterSnapshot:
    n = draw(st.integers(1, 7))
    zones = [draw(st.sampled_from(["a", "b", "c", None])) for _ in range(n)]
    pods: list[BoundPod] = []
    for i in range(n):
        for k in range(draw(st.integers(0, 3))):
            app = draw(st.sampled_from(APPS))
            pods.append(
                bound(
                    f"b{i}-{k}",
                    f"n{i}",
                    prio=draw(st.sampled_from([0, 10])),
                    labels={"app": app},
                    affinity=draw(rules()),
                    cpu_m=draw(st.sampled_from([1000, 20_000])),
                )
            )
    nominated = []
    if n > 1 and draw(st.booleans()):
        other = make_pod("nom", labels={"app": draw(st.sampled_from(APPS))}, prio=1000)
        nominated.append(NominatedPod(other, "n1"))
    cordoned = [i for i in range(n) if draw(st.integers(0, 5)) == 0]
    return zoned(zones, bound_pods=pods, cordoned=cordoned, nominated=nominated, cpu_m=32_000)


@st.composite
def pending(draw: Any) -> list[PodInfo]:
    out = []
    for k in range(draw(st.integers(1, 6))):
        app = draw(st.sampled_from(APPS))
        constraints = tuple(
            spread(
                key,
                draw(st.integers(1, 2)),
                draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
                exists("app") if draw(st.booleans()) else selector(app=app),
                min_domains=draw(st.sampled_from([None, 3])),
            )
            for key in draw(st.lists(st.sampled_from(KEYS), max_size=2, unique=True))
        )
        constraints = tuple(
            c
            for c in constraints
            if c.min_domains is None or c.when_unsatisfiable == "DoNotSchedule"
        )
        rs = selector(app=app) if draw(st.booleans()) else None
        out.append(
            make_pod(
                f"p{k}",
                cpu_m=draw(st.sampled_from([1000, 12_000])),
                prio=draw(st.sampled_from([0, 100])),
                labels={"app": app},
                affinity=draw(rules()),
                spread=constraints,
                default_selector=rs,
            )
        )
    return out


def summary(d: SchedulingDecision) -> tuple[object, ...]:
    return (
        [(b.pod_uid, b.node) for b in d.bindings],
        [(u.pod_uid, u.message, u.nominated_node) for u in d.unschedulable],
        [(p.preemptor_uid, p.node, p.victims) for p in d.preemptions],
        d.next_start_index,
    )


@settings(max_examples=200, deadline=None)
@given(snap=clusters(), pods=pending())
def test_fast_and_reference_agree_with_spreading_and_affinity(
    snap: ClusterSnapshot, pods: list[PodInfo]
) -> None:
    fast = make_scheduler().decide(snap, pods)
    reference = make_scheduler(reference=True).decide(snap, pods)
    assert summary(fast) == summary(reference)
