from __future__ import annotations

from dataclasses import replace

from gpuplane.scheduler.framework.interfaces import QueuedPodInfo
from gpuplane.scheduler.framework.types import PodGroupInfo, PodInfo
from tests.unit.scheduler.factories import GPUPLANE, bound, make_cluster, make_pod, make_scheduler
from tests.unit.scheduler.plugins.helpers import plugin

TIMEOUT = "rejected due to timeout after waiting 30s at plugin Coscheduling."
GROUP = PodGroupInfo("ns/g", min_member=3, num_pods=3)


def members(n: int = 3, gpus: int = 8) -> list[PodInfo]:
    return [make_pod(f"m{i}", gpus, group="g") for i in range(n)]


def test_queue_sort_by_group_creation_then_name() -> None:
    co = plugin("Coscheduling", gpuplane=True)
    a = QueuedPodInfo(make_pod("x", group="g", group_created_s=5.0), 9.0, 9.0)
    b = QueuedPodInfo(make_pod("y"), 1.0, 7.0)
    assert co.sort_key(a) == (0, 5.0, "ns/x")
    assert co.sort_key(b) == (0, 7.0, "ns/y")


def test_all_or_nothing_in_one_decision() -> None:
    scheduler = make_scheduler([GPUPLANE])
    too_small = scheduler.decide(make_cluster([8, 8], pod_groups=[GROUP]), members())
    assert not too_small.bindings and not too_small.waiting
    messages = {u.pod_uid: u.message for u in too_small.unschedulable}
    assert messages["m0"] == "0/1 nodes are available: 1 optimistic rejection in PostFilter."
    assert messages["m2"].endswith(
        "PodGroup ns/g gets rejected due to Pod m2 is unschedulable even after PostFilter"
    )
    fits = scheduler.decide(make_cluster([8, 8, 8], pod_groups=[GROUP]), members())
    assert sorted(b.pod_uid for b in fits.bindings) == ["m0", "m1", "m2"]


def test_members_wait_at_permit_until_the_quorum() -> None:
    scheduler = make_scheduler([GPUPLANE])
    first = scheduler.decide(make_cluster([8] * 4, pod_groups=[GROUP], now_s=10.0), members()[:2])
    assert not first.bindings
    assert [(w.pod.uid, w.deadline_s, w.plugin) for w in first.waiting] == [
        ("m0", 70.0, "Coscheduling"),
        ("m1", 70.0, "Coscheduling"),
    ]
    held = {w.pod.uid: w.node for w in first.waiting}
    # The reservations hold: another pod cannot take those nodes.
    later = make_cluster([8] * 4, pod_groups=[GROUP], waiting=first.waiting, now_s=40.0)
    d = scheduler.decide(later, [make_pod("other", 8), members()[2]])
    placed = {b.pod_uid: b.node for b in d.bindings}
    assert placed["m0"] == held["m0"] and placed["m1"] == held["m1"]
    assert len(set(placed.values())) == 4
    assert not d.waiting


def test_permit_timeout_releases_the_whole_gang() -> None:
    scheduler = make_scheduler([GPUPLANE])
    timed = PodGroupInfo("ns/g", min_member=3, num_pods=3, schedule_timeout_s=30.0)
    first = scheduler.decide(make_cluster([8] * 3, pod_groups=[timed]), members()[:2])
    assert [w.deadline_s for w in first.waiting] == [30.0, 30.0]
    still = scheduler.decide(
        make_cluster([8] * 3, pod_groups=[timed], waiting=first.waiting, now_s=29.0), []
    )
    assert len(still.waiting) == 2 and not still.unschedulable
    over = scheduler.decide(
        make_cluster([8] * 3, pod_groups=[timed], waiting=first.waiting, now_s=30.0), []
    )
    assert not over.waiting and not over.bindings
    assert [(u.pod_uid, u.message) for u in over.unschedulable] == [
        ("m0", "0/1 nodes are available: 1 " + TIMEOUT),
        ("m1", "0/1 nodes are available: 1 rejection in Unreserve."),
    ]


def test_bound_members_count_toward_the_quorum() -> None:
    on_node = replace(bound("m0", "n0", tuple(range(8))), pod_group="g")
    group = PodGroupInfo("ns/g", min_member=2, num_pods=2, assigned=1)
    snap = make_cluster([0, 8], bound_pods=[on_node], pod_groups=[group])
    d = make_scheduler([GPUPLANE]).decide(snap, [make_pod("m1", 8, group="g")])
    assert [b.node for b in d.bindings] == ["n1"]


def test_missing_pod_group_is_rejected_at_permit() -> None:
    d = make_scheduler([GPUPLANE]).decide(make_cluster([8]), [make_pod("m0", 1, group="nope")])
    assert d.unschedulable[0].message == "0/1 nodes are available: 1 PodGroup not found."
