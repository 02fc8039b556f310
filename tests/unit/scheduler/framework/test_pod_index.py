"""PodLabelIndex: kept incrementally it equals one built from the pods left; a selector's
candidate groups hold every group it matches; pods with equal rules share one affinity group."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.api.selectors import from_match_fields
from gpuplane.scheduler.framework.pod_index import LabelGroup, PodLabelIndex
from gpuplane.scheduler.framework.types import BoundPod
from tests.unit.scheduler.factories import bound

RULE: dict[str, object] = {
    "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []}
}


def snapshot_of(index: PodLabelIndex) -> list[str]:
    groups = [
        (
            g.namespace,
            sorted(g.labels.items()),
            sorted(g.nodes.items()),
            sorted(g.terminating.items()),
        )
        for g in index.all_groups()
    ]
    rules = [
        (g.pod.namespace, sorted(g.pod.labels.items()), sorted(g.nodes.items()))
        for g in index.with_affinity()
    ]
    return sorted(map(repr, groups)) + sorted(map(repr, rules))


@st.composite
def pods(draw: Any, k: int) -> BoundPod:
    return bound(
        f"p{k}",
        draw(st.sampled_from(["n0", "n1", "n2"])),
        labels={
            "app": draw(st.sampled_from(["a", "b"])),
            "tier": draw(st.sampled_from(["x", "y"])),
        },
        namespace=draw(st.sampled_from(["ns", "other"])),
        affinity=RULE if draw(st.booleans()) else None,
        terminating=draw(st.integers(0, 4)) == 0,
    )


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_incremental_equals_rebuilt(data: Any) -> None:
    index = PodLabelIndex()
    alive: dict[str, BoundPod] = {}
    for k in range(data.draw(st.integers(1, 30))):
        if alive and data.draw(st.booleans()):
            uid = data.draw(st.sampled_from(sorted(alive)))
            index.remove(uid)
            del alive[uid]
        else:
            pod = data.draw(pods(k))
            index.add(pod, pod.node, terminating=pod.terminating)
            alive[pod.uid] = pod
    assert snapshot_of(index) == snapshot_of(PodLabelIndex.of_bound(alive.values()))
    assert len(index) == len(alive)
    for selector in (
        from_match_fields({"app": "a"}, None),
        from_match_fields(None, [("tier", "In", ["x", "y"])]),
    ):
        candidates = {id(g) for g in index.groups("ns", selector)}
        matching: list[LabelGroup] = [g for g in index.groups("ns") if selector.matches(g.labels)]
        assert all(id(g) in candidates for g in matching)


def test_pods_with_equal_rules_share_a_group() -> None:
    index = PodLabelIndex.of_bound(
        [bound(f"p{k}", f"n{k % 2}", labels={"app": "a"}, affinity=RULE) for k in range(5)]
    )
    (group,) = index.with_affinity()
    assert group.nodes == {"n0": 3, "n1": 2}
