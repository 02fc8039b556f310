"""The binding cycle's extension points and their failures, with plugins made for the test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from gpuplane.scheduler.framework.config import ProfileConfig
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.framework.status import SUCCESS, Status, skip, unschedulable
from gpuplane.scheduler.framework.types import PodInfo
from gpuplane.scheduler.plugins.registry import in_tree_registry
from tests.unit.scheduler.factories import make_cluster, make_pod, validate_profile


class Refuser:
    """PreBind refuses pods named "bad"; Bind skips (DefaultBinder binds); Reserve refuses
    pods named "no-room"."""

    name: ClassVar[str] = "TestRefuser"
    extension_points: ClassVar[frozenset[str]] = frozenset({"preBind", "bind", "reserve"})
    unsupported: ClassVar[tuple[str, ...]] = ()
    unreserved: ClassVar[list[str]] = []

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def pre_bind(self, cs: Any, pod: PodInfo, node: str) -> Status:
        return unschedulable("volume not ready") if pod.name == "bad" else SUCCESS

    def bind(self, cs: Any, pod: PodInfo, node: str) -> Status:
        return skip()

    def reserve(self, cs: Any, pod: PodInfo, st: Any, i: int) -> Status:
        return unschedulable("reservation refused") if pod.name == "no-room" else SUCCESS

    def unreserve(self, cs: Any, pod: PodInfo, st: Any, i: int) -> None:
        Refuser.unreserved.append(pod.name)


@pytest.fixture
def refuser() -> Iterator[Scheduler]:
    registry = in_tree_registry()
    registry.register("TestRefuser")(Refuser)
    try:
        cfg = ProfileConfig.model_validate(
            {
                "plugins": {
                    "multiPoint": {"enabled": [{"name": "TestRefuser"}]},
                    "bind": {"enabled": [{"name": "TestRefuser"}, {"name": "DefaultBinder"}]},
                }
            }
        )
        yield Scheduler([cfg], registry=registry)
    finally:
        Refuser.unreserved.clear()


def test_bind_plugins_run_until_one_does_not_skip(refuser: Scheduler) -> None:
    d = refuser.decide(make_cluster([8]), [make_pod("good", 1)])
    assert [b.pod_uid for b in d.bindings] == ["good"]


def test_pre_bind_rejection_releases_the_node(refuser: Scheduler) -> None:
    d = refuser.decide(make_cluster([1]), [make_pod("bad", 1), make_pod("next", 1)])
    assert d.unschedulable[0].message == "0/1 nodes are available: 1 volume not ready."
    assert [b.pod_uid for b in d.bindings] == ["next"]  # the GPU was given back
    assert "bad" in Refuser.unreserved


def test_reserve_rejection_runs_unreserve(refuser: Scheduler) -> None:
    d = refuser.decide(make_cluster([8]), [make_pod("no-room", 1)])
    assert d.unschedulable[0].message == "0/1 nodes are available: 1 reservation refused."
    assert Refuser.unreserved == ["no-room"]


def test_unsupported_args_say_what_is_not_modelled() -> None:
    from gpuplane.core.errors import InputError

    with pytest.raises(InputError) as info:
        validate_profile(
            {"pluginConfig": [{"name": "Coscheduling", "args": {"podGroupBackoffSeconds": 5}}]},
        )
    assert "Coscheduling does not model: PodGroup minResources" in str(info.value)
