from __future__ import annotations

import numpy as np
import pytest
from pydantic import TypeAdapter, ValidationError

from gpuplane.core.errors import InputError
from gpuplane.operator.faults import (
    IGNORED_XIDS,
    FaultEvent,
    FaultEventKind,
    FaultSpec,
    GpuXidFault,
    NodeLostFault,
    marks_unhealthy,
    plan_faults,
)

K = FaultEventKind
POOLS = {"a100": ["a100-0", "a100-1", "a100-2"], "h100": ["h100-0", "h100-1"]}
GPUS = {name: 8 for names in POOLS.values() for name in names}
specs_adapter = TypeAdapter(list[FaultSpec])


def specs(data: list[dict[str, object]]) -> list[NodeLostFault | GpuXidFault]:
    return specs_adapter.validate_python(data)


def plan(data: list[dict[str, object]], seed: int = 0, horizon: float = 86_400) -> list[FaultEvent]:
    return plan_faults(
        specs(data), POOLS, horizon, np.random.default_rng(seed), num_gpus_by_node=GPUS
    )


def test_device_plugin_ignores_application_xids() -> None:
    assert sorted(IGNORED_XIDS) == [13, 31, 43, 45, 68, 109]
    assert marks_unhealthy(79) and marks_unhealthy(48) and not marks_unhealthy(13)


def test_node_lost_at_a_time_with_recovery() -> None:
    events = plan(
        [{"kind": "node-lost", "at": "10m", "nodes": {"names": ["h100-1"]}, "recover_after": "5m"}]
    )
    assert [(e.t_s, e.kind, e.node) for e in events] == [
        (600, K.NODE_LOST, "h100-1"),
        (900, K.NODE_RECOVERED, "h100-1"),
    ]


def test_xid_on_a_given_gpu_without_recovery() -> None:
    events = plan([{"kind": "gpu-xid", "at": 60, "xid": 79, "gpu": 3, "nodes": {"pool": "a100"}}])
    assert [(e.node, e.gpu_index, e.xid, e.marks_unhealthy) for e in events] == [
        ("a100-0", 3, 79, True),
        ("a100-1", 3, 79, True),
        ("a100-2", 3, 79, True),
    ]
    assert all(e.kind == K.GPU_XID for e in events)
    assert "fallen off the bus" in events[0].message
    ignored = plan(
        [{"kind": "gpu-xid", "at": 60, "xid": 13, "gpu": 0, "nodes": {"names": ["a100-0"]}}]
    )
    assert ignored[0].marks_unhealthy is False


def test_poisson_faults_are_deterministic_for_a_seed_and_time_ordered() -> None:
    data = [
        {"kind": "node-lost", "rate_per_hour": 0.5, "nodes": {"count": 1}, "recover_after": "30m"},
        {"kind": "gpu-xid", "rate_per_hour": 2, "xid": 48, "nodes": {"pool": "h100", "count": 1}},
    ]
    first, again, other = plan(data, seed=5), plan(data, seed=5), plan(data, seed=6)
    assert first == again and first != other
    assert [e.t_s for e in first] == sorted(e.t_s for e in first)
    assert all(0 <= e.t_s < 86_400 for e in first)
    assert 10 < sum(e.kind == K.GPU_XID for e in first) < 80
    assert {e.node for e in first if e.kind == K.GPU_XID} <= set(POOLS["h100"])
    assert all(0 <= (e.gpu_index or 0) < 8 for e in first)


def test_faults_and_recoveries_alternate_per_target() -> None:
    data = [{"kind": "node-lost", "rate_per_hour": 6, "nodes": {"count": 2}, "recover_after": "1h"}]
    for seed in range(5):
        down: set[str] = set()
        for e in plan(data, seed=seed):
            if e.kind == K.NODE_LOST:
                assert e.node not in down
                down.add(e.node)
            else:
                assert e.node in down
                down.remove(e.node)


def test_label_selection_and_horizon() -> None:
    labels = {"a100-0": {"zone": "x"}, "h100-0": {"zone": "x"}, "h100-1": {"zone": "y"}}
    spec = specs([{"kind": "node-lost", "at": 5, "nodes": {"labels": {"zone": "x"}}}])
    events = plan_faults(spec, POOLS, 100, np.random.default_rng(0), labels_by_node=labels)
    assert [e.node for e in events] == ["a100-0", "h100-0"]
    assert plan([{"kind": "node-lost", "at": 500, "recover_after": 1}], horizon=100) == []
    late = plan(
        [{"kind": "node-lost", "at": 50, "recover_after": 100, "nodes": {"count": 1}}], horizon=100
    )
    assert [e.kind for e in late] == [K.NODE_LOST]


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"kind": "node-lost", "at": 1, "nodes": {"pool": "v100"}}, "faults[0].nodes.pool"),
        ({"kind": "node-lost", "at": 1, "nodes": {"names": ["nope"]}}, "faults[0].nodes.names"),
        ({"kind": "gpu-xid", "at": 1, "gpu": 8}, "faults[0].gpu"),
    ],
)
def test_selection_mistakes_are_located(data: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as info:
        plan([data])
    assert info.value.location.field == field


def test_random_gpu_needs_gpu_counts() -> None:
    spec = specs([{"kind": "gpu-xid", "at": 1}])
    with pytest.raises(InputError, match="GPU count"):
        plan_faults(spec, POOLS, 100, np.random.default_rng(0))


@pytest.mark.parametrize(
    "data",
    [
        {"kind": "node-lost"},
        {"kind": "node-lost", "at": 1, "rate_per_hour": 1},
        {"kind": "node-lost", "at": "soon"},
        {"kind": "gpu-xid", "at": 1, "gpu": -1},
        {"kind": "gpu-xid", "at": 1, "gpu": "any"},
        {"kind": "disk-full", "at": 1},
        {"kind": "node-lost", "at": 1, "nodes": {"count": 0}},
        {"kind": "node-lost", "at": 1, "typo": True},
    ],
)
def test_spec_mistakes_are_validation_errors(data: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        specs([data])
