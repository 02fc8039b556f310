from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from gpuplane.core.errors import InputError
from gpuplane.scheduler.framework.config import ProfileConfig, check_profiles, gpuplane_profile
from gpuplane.scheduler.framework.filtering import num_feasible_nodes_to_find
from gpuplane.scheduler.framework.plugin_sets import merge_plugin_set, resolve_profile
from gpuplane.scheduler.framework.registry import (
    Registry,
    UnknownPluginError,
)
from gpuplane.scheduler.framework.scheduler import Scheduler
from gpuplane.scheduler.plugins.noderesources.fit import NodeResourcesFitArgs
from gpuplane.scheduler.plugins.registry import in_tree_registry
from tests.unit.scheduler.factories import validate_profile


def points(data: dict[str, Any]) -> dict[str, list[tuple[str, int]]]:
    resolved = resolve_profile(ProfileConfig.model_validate(data), in_tree_registry())
    return {k: [(p.name, p.weight) for p in v] for k, v in resolved.points.items()}


def test_default_profile_is_kube_v1_31_defaults() -> None:
    # apis/config/v1/default_plugins.go (v1.31) expanded over the points each plugin extends;
    # the volume plugins, NodePorts, NodeName and SchedulingGates are no-ops extending none.
    p = points({})
    assert p["queueSort"] == [("PrioritySort", 1)]
    assert [n for n, _ in p["filter"]] == [
        "NodeUnschedulable",
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    ]
    assert [n for n, _ in p["preScore"]] == [
        "NodeAffinity",
        "PodTopologySpread",
        "InterPodAffinity",
    ]
    assert p["score"] == [
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodeResourcesFit", 1),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("DynamicResources", 1),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
    ]
    assert [n for n, _ in p["postFilter"]] == ["DefaultPreemption"]
    assert p["permit"] == [] and p["reserve"] == [("DynamicResources", 1)]
    assert [n for n, _ in p["bind"]] == ["DefaultBinder"]


def test_gpuplane_profile_adds_gpu_sharing_and_coscheduling() -> None:
    resolved = resolve_profile(gpuplane_profile(), in_tree_registry())
    p = {k: [(x.name, x.weight) for x in v] for k, v in resolved.points.items()}
    assert resolved.scheduler_name == "gpuplane-scheduler"
    assert p["queueSort"] == [("Coscheduling", 1)]
    assert [n for n, _ in p["filter"]][-1] == "GPUSharing"
    assert [n for n, _ in p["postFilter"]] == ["DefaultPreemption", "Coscheduling"]
    assert [n for n, _ in p["permit"]] == ["Coscheduling"]


def test_no_op_kube_plugins_may_be_named_and_disabled() -> None:
    p = points(
        {
            "plugins": {
                "multiPoint": {
                    "enabled": [{"name": "NodePorts"}],
                    "disabled": [{"name": "VolumeBinding"}, {"name": "DynamicResources"}],
                }
            }
        }
    )
    assert "DynamicResources" not in [n for n, _ in p["filter"]]


def test_user_sets_merge_like_kube_scheduler() -> None:
    p = points(
        {
            "plugins": {
                "multiPoint": {
                    "enabled": [
                        {"name": "Coscheduling"},
                        {"name": "NodeResourcesFit", "weight": 5},
                    ],
                    "disabled": [{"name": "PrioritySort"}],
                },
                "score": {"disabled": [{"name": "TaintToleration"}]},
            }
        }
    )
    assert p["queueSort"] == [("Coscheduling", 1)]
    assert p["score"] == [
        ("NodeAffinity", 2),
        ("NodeResourcesFit", 5),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("DynamicResources", 1),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
    ]
    assert [n for n, _ in p["permit"]] == ["Coscheduling"]


def test_merge_plugin_set_replaces_in_place_and_appends() -> None:
    default = [("A", None), ("B", 2), ("C", None)]
    assert merge_plugin_set(default, [("B", 7), ("D", None)], ["C"]) == [
        ("A", None),
        ("B", 7),
        ("D", None),
    ]
    assert merge_plugin_set(default, [("D", None)], ["*"]) == [("D", None)]


def test_point_specific_plugins_come_first_then_multipoint_then_the_rest() -> None:
    p = points(
        {"plugins": {"filter": {"enabled": [{"name": "GPUSharing"}, {"name": "NodeResourcesFit"}]}}}
    )
    names = [n for n, _ in p["filter"]]
    assert names[0] == "NodeResourcesFit"  # named both in multiPoint and at the point
    assert names[-1] == "GPUSharing"  # the point's own, after the multiPoint ones


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (
            {"plugins": {"filter": {"enabled": [{"name": "NodeResourcesFitt"}]}}},
            "unknown plugin 'NodeResourcesFitt'; valid names: Coscheduling, DefaultBinder",
        ),
        (
            {"plugins": {"filter": {"enabled": [{"name": "AzureDiskLimits"}]}}},
            "AzureDiskLimits' is a kube-scheduler plugin gpuplane does not model",
        ),
        (
            {
                "pluginConfig": [
                    {
                        "name": "PodTopologySpread",
                        "args": {
                            "defaultConstraints": [
                                {
                                    "maxSkew": 1,
                                    "topologyKey": "zone",
                                    "whenUnsatisfiable": "DoNotSchedule",
                                }
                            ]
                        },
                    }
                ]
            },
            "when .defaultConstraints are not empty must be List",
        ),
        (
            {
                "pluginConfig": [
                    {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 101}}
                ]
            },
            "args.hardPodAffinityWeight",
        ),
        (
            {"plugins": {"score": {"enabled": [{"name": "PrioritySort"}]}}},
            "score.enabled[0]: plugin PrioritySort does not extend score; it extends queueSort",
        ),
        (
            {"plugins": {"multiPoint": {"enabled": [{"name": "Coscheduling"}]}}},
            "exactly one queueSort plugin must be enabled, got 2",
        ),
        (
            {"plugins": {"multiPoint": {"disabled": [{"name": "*"}]}}},
            "exactly one queueSort plugin must be enabled, got 0",
        ),
        (
            {
                "pluginConfig": [
                    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "X"}}}
                ]
            },
            "args.scoringStrategy.type: got 'X'; expected 'LeastAllocated' or 'MostAllocated'",
        ),
        (
            {"pluginConfig": [{"name": "Coscheduling", "args": {"podGroupBackoffSeconds": 5}}]},
            "args.podGroupBackoffSeconds",
        ),
        ({"pluginConfig": [{"name": "PrioritySort", "args": {"x": 1}}]}, "takes no args"),
        ({"percentageOfNodesToScore": 101}, "less than or equal to 100"),
    ],
)
def test_bad_profiles_are_located(data: dict[str, Any], needle: str) -> None:
    with pytest.raises(InputError) as info:
        validate_profile(data)
    assert needle in str(info.value)


def test_errors_carry_the_field_path() -> None:
    data = {"plugins": {"filter": {"enabled": [{"name": "Nope"}]}}}
    with pytest.raises(InputError) as info:
        validate_profile(data)
    assert info.value.location.field == "plugins.filter.enabled[0].name"


def test_profiles_share_a_queue_sort_and_have_unique_names() -> None:
    a = ProfileConfig(schedulerName="a")
    with pytest.raises(ValueError, match="duplicate profile with scheduler name 'a'"):
        check_profiles([a, a], in_tree_registry())
    b = gpuplane_profile("b")
    with pytest.raises(ValueError, match="different queue sort plugins"):
        check_profiles([a, b], in_tree_registry())


def test_plugin_args_reach_the_plugin() -> None:
    cfg = ProfileConfig.model_validate(
        {
            "pluginConfig": [
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
            ]
        }
    )
    args = resolve_profile(cfg, in_tree_registry()).args["NodeResourcesFit"]
    assert isinstance(args, NodeResourcesFitArgs)
    assert args.scoringStrategy.type == "MostAllocated"


def test_registry_decorator_and_lookup() -> None:
    reg = Registry()

    @reg.register("Mine")
    class Mine:
        extension_points = frozenset({"filter"})

    assert reg.get("Mine").extension_points == frozenset({"filter"})
    with pytest.raises(UnknownPluginError, match="valid names: Mine"):
        reg.get("Other")
    with pytest.raises(ValueError, match="already registered"):
        reg.register("Mine")(Mine)
    assert "GPUSharing" in in_tree_registry().names()


@pytest.mark.parametrize(
    ("percentage", "nodes", "expected"),
    [
        (None, 50, 50),  # below 100 nodes: all of them
        (None, 150, 100),  # 49% of 150 = 73, raised to the minimum of 100
        (None, 1000, 420),  # adaptive: 50 - 1000/125 = 42%
        (None, 5000, 500),  # 50 - 40 = 10%
        (None, 6000, 300),  # 50 - 48 = 2%, floored at 5%
        (0, 5000, 500),  # 0 means adaptive too
        (100, 5000, 5000),
        (1, 5000, 100),  # never fewer than 100
    ],
)
def test_num_feasible_nodes_to_find(percentage: int | None, nodes: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(percentage, nodes, True) == expected
    assert num_feasible_nodes_to_find(percentage, nodes, False) == 1


def test_without_a_registry_only_the_shape_is_checked_and_the_scheduler_checks_the_rest() -> None:
    cfg = ProfileConfig.model_validate({"plugins": {"filter": {"enabled": [{"name": "Nope"}]}}})
    with pytest.raises(ValidationError, match="unknown plugin 'Nope'; valid names: Coscheduling"):
        Scheduler([cfg], registry=in_tree_registry())
    with pytest.raises(ValidationError, match="'\\*' may only be used under disabled"):
        ProfileConfig.model_validate({"plugins": {"filter": {"enabled": [{"name": "*"}]}}})
