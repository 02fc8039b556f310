"""A Filter answering Error ends the pod's attempt where kube-scheduler's search would meet it
(findNodesThatPassFilters), with the framework's wrapped message; the vectorised path and the
node-by-node reference agree on the outcome and on the round-robin start."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.scheduler.framework.decision import SchedulingDecision
from gpuplane.scheduler.framework.explain import ReasonGroup
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.framework.state import ClusterState, CycleState
from gpuplane.scheduler.framework.status import SUCCESS, Code, Status
from gpuplane.scheduler.framework.types import BoolArray, IntArray, PodInfo
from gpuplane.scheduler.plugins.registry import in_tree_registry
from tests.unit.scheduler.factories import make_cluster, make_pod

NAME = "TestBroken"
MESSAGE = "lookup failed"


class Broken:
    """Filter: Error on the nodes in ``erring``, Success elsewhere."""

    name: ClassVar[str] = NAME
    extension_points: ClassVar[frozenset[str]] = frozenset({"filter"})
    unsupported: ClassVar[tuple[str, ...]] = ()
    filter_may_error: ClassVar[bool] = True
    erring: ClassVar[set[int]] = set()

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, cs: CycleState, pod: PodInfo, st: ClusterState) -> BoolArray:
        mask = np.ones(st.num_nodes, dtype=bool)
        mask[sorted(Broken.erring)] = False
        return mask

    def filter_reasons(
        self, cs: CycleState, pod: PodInfo, st: ClusterState, nodes: IntArray
    ) -> list[ReasonGroup]:
        return [ReasonGroup(NAME, Code.ERROR, MESSAGE, nodes)]

    def filter_node(self, cs: CycleState, pod: PodInfo, st: ClusterState, i: int) -> Status:
        return Status(Code.ERROR, (MESSAGE,)) if i in Broken.erring else SUCCESS


@pytest.fixture
def schedulers() -> Iterator[tuple[Scheduler, Scheduler]]:
    registry = in_tree_registry()
    registry.register(NAME)(Broken)
    cfg = ProfileConfig.model_validate(
        {"percentageOfNodesToScore": 10, "plugins": {"filter": {"enabled": [{"name": NAME}]}}}
    )
    try:
        yield (
            Scheduler([cfg], registry=registry),
            Scheduler([cfg], registry=registry, reference=True),
        )
    finally:
        Broken.erring.clear()


def outcome(d: SchedulingDecision) -> tuple[object, ...]:
    return (
        [(b.pod_uid, b.node) for b in d.bindings],
        [(u.pod_uid, u.message, u.error, u.clear_nomination) for u in d.unschedulable],
        d.next_start_index,
    )


ERROR = f'running "{NAME}" filter plugin: {MESSAGE}'


def test_an_error_before_enough_nodes_fit_fails_the_attempt(
    schedulers: tuple[Scheduler, Scheduler],
) -> None:
    # 250 nodes: the search wants 100 feasible nodes (the minimum) and stops at the 101st from
    # the start, node 50 (200..249, then 0..50): an Error there or later is never met.
    snap = make_cluster([8] * 250, next_start_index=200)
    cases = (({205}, 205), ({5}, 5), ({60}, None), ({120, 5, 230}, 230))
    for erring, stopped_at in cases:
        Broken.erring.clear()
        Broken.erring.update(erring)
        fast, ref = (s.decide(snap, [make_pod("p", 1)]) for s in schedulers)
        assert outcome(fast) == outcome(ref)
        if stopped_at is not None:
            (u,) = fast.unschedulable
            assert (u.message, u.error, u.clear_nomination) == (ERROR, True, True)
            # The nodes before the erring one were checked: the next search starts there.
            assert fast.bindings == () and fast.next_start_index == stopped_at
        else:
            assert len(fast.bindings) == 1 and fast.unschedulable == ()


def test_a_node_another_plugin_rejects_first_does_not_error(
    schedulers: tuple[Scheduler, Scheduler],
) -> None:
    """NodeResourcesFit comes before the test plugin: on n0 (no free GPU) it rejects first."""
    Broken.erring.add(0)
    snap = make_cluster([0, 8])
    for s in schedulers:
        decision = s.decide(snap, [make_pod("p", 1)])
        assert [(b.pod_uid, b.node) for b in decision.bindings] == [("p", "n1")]


@settings(max_examples=25, deadline=None)
@given(
    start=st.integers(0, 149),
    erring=st.sets(st.integers(0, 149), max_size=3),
    seed=st.integers(0, 100),
)
def test_fast_and_reference_agree_with_errors(start: int, erring: set[int], seed: int) -> None:
    registry = in_tree_registry()
    registry.register(NAME)(Broken)
    cfg = ProfileConfig.model_validate(
        {"percentageOfNodesToScore": 5, "plugins": {"filter": {"enabled": [{"name": NAME}]}}}
    )
    rng = np.random.default_rng(seed)
    gpus = [int(g) for g in rng.integers(0, 9, size=150)]
    snap = make_cluster(gpus, next_start_index=start)
    pods = [make_pod(f"p{k}", int(rng.integers(1, 9))) for k in range(4)]
    Broken.erring.clear()
    Broken.erring.update(erring)
    try:
        fast = Scheduler([cfg], registry=registry).decide(snap, pods)
        ref = Scheduler([cfg], registry=registry, reference=True).decide(snap, pods)
        assert outcome(fast) == outcome(ref)
    finally:
        Broken.erring.clear()
